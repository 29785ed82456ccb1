// Drives the memory console in the system's Chromium with playwright-core (no browser download) and
// prints what the page showed as one JSON line; tests/e2e/test_console.py starts it and judges it.
// The job (CONSOLE_JOB, JSON): url, email, password, chromium, shots, and the words of the seeded
// facts: ended_before (a day the ended fact was true), ended_word, review_new, review_ends, and a
// conversation to look up by id (lookup).
// Every wait is on the page: a locator's text or state, with a deadline, never a sleep.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const job = JSON.parse(process.env.CONSOLE_JOB);
const WAIT = { timeout: 60_000 };
mkdirSync(job.shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: job.chromium,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
const page = await context.newPage();
const problems = [];
page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
page.on("dialog", (dialog) => dialog.accept()); // the delete's "are you sure?"
const status = page.locator("#status");
const seen = {};

async function statusSays(text) {
  await page.locator("#status", { hasText: text }).waitFor(WAIT);
}
async function show(asOf) {
  await page.getByLabel("As of").fill(asOf);
  await page.getByRole("button", { name: "Show" }).click();
  await page.locator("#status", { hasText: asOf ? `as of ${asOf}.` : /memories\.$/ }).waitFor(WAIT);
}
const layerCards = (layer) => page.locator(".layer", { has: page.getByRole("heading", { name: layer }) }).locator(".card");
const currentContents = () => page.locator("#layers .card .content").allTextContents();
async function receipt() {
  const box = page.locator("#receipt article");
  await box.waitFor(WAIT);
  return { title: await box.getByRole("heading").textContent(),
    stores: await box.locator("tbody tr td:first-child").allTextContents() };
}

try {
  await page.goto(job.url);
  await page.getByLabel("Email").fill(job.email);
  await page.getByLabel("Password").fill(job.password);
  await page.getByLabel("Password").press("Enter"); // the keyboard signs in, as the button does
  await page.getByText(`Signed in as ${job.email}`).waitFor(WAIT);
  await statusSays("Ready.");
  // Every control has a name a screen reader reads: a label, or a button's text or aria-label.
  seen.unnamed = await page.evaluate(() => [...document.querySelectorAll("input, select, button")]
    .filter((el) => !el.closest("[hidden]"))
    .filter((el) => !(el.labels?.length || el.getAttribute("aria-label") || (el.tagName === "BUTTON" && el.textContent.trim())))
    .map((el) => el.outerHTML.slice(0, 80)));

  // Memories by layer, with their quotes and conversations.
  seen.layers = {};
  for (const layer of ["Short-term", "Long-term", "Archive"]) {
    seen.layers[layer] = [];
    for (const card of await layerCards(layer).all()) {
      seen.layers[layer].push({ content: await card.locator(".content").textContent(),
        quotes: (await card.locator("blockquote").allTextContents()).map((q) => q.replace(/^“|”$/g, "")),
        source: (await card.locator(".source a").allTextContents())[0] ?? null,
        added: ((await card.locator(".meta").textContent()).match(/added (\S+)/) || [])[1] ?? null });
    }
  }
  seen.conversations = [];
  for (const row of await page.locator("#conversation-rows tr").all()) {
    const cells = await row.locator("td").allTextContents();
    seen.conversations.push({ id: cells[0], state: cells[1] });
  }
  // A conversation no memory cites (the sample's small talk), found by its id.
  await page.getByLabel("Conversation id").fill(job.lookup);
  await page.getByRole("button", { name: "Look up" }).click();
  await statusSays(`Conversation ${job.lookup}:`);
  seen.looked_up = await page.locator(`[id="conversation-${job.lookup}"] td`).allTextContents();
  await page.screenshot({ path: join(job.shots, "console.png"), fullPage: true, clip: { x: 0, y: 0, width: 1100, height: 1250 } });

  // The review queue: the new statement beside the fact it would end; accepted in one click.
  const entry = page.locator("#review-list .review", { hasText: job.review_new });
  await entry.waitFor(WAIT);
  seen.review = { new: await entry.locator(".pair > div").first().textContent(),
    would_end: await entry.locator(".pair > div").last().textContent() };
  await entry.getByRole("button", { name: /^Accept/ }).click();
  await statusSays("Review resolved");
  await entry.waitFor({ ...WAIT, state: "detached" });
  seen.after_review = { queue: await page.locator("#review-list .review .pair > div:first-child").allTextContents(),
    current: await currentContents() };

  // The ended fact, as of a day it was true: restored, then current; its history says so.
  await show(job.ended_before);
  const ended = page.locator("#layers .card.ended", { hasText: job.ended_word });
  await ended.waitFor(WAIT);
  seen.restore = { content: await ended.locator(".content").textContent(),
    ended_badge: await ended.getByText("Ended:").isVisible() };
  await ended.getByRole("button", { name: /^Restore/ }).click();
  await statusSays("is current again");
  await show("");
  const restored = page.locator("#layers .card", { hasText: seen.restore.content });
  await restored.first().waitFor(WAIT);
  seen.restore.current_after = (await restored.count()) === 1 && !(await restored.first().getAttribute("class")).includes("ended");
  await restored.getByRole("button", { name: /^History/ }).click();
  await statusSays("commits.");
  seen.restore.history_statuses = await page.locator("#history tbody tr td:nth-child(3)").allTextContents();

  // A delete, answered by its receipt; the receipt read again after a reload.
  const victim = layerCards("Long-term").first();
  seen.delete = { content: await victim.locator(".content").textContent() };
  await victim.getByRole("button", { name: /^Delete/ }).click();
  await statusSays("Deleted memory");
  seen.delete.receipt = await receipt();
  seen.delete.current_after = await currentContents();
  await page.locator("#receipts").screenshot({ path: join(job.shots, "console-receipt.png") });
  await page.reload();
  await statusSays("Ready.");
  await page.getByRole("button", { name: /^Read the receipt of memory/ }).first().click();
  await statusSays("Receipt ");
  seen.delete.receipt_after_reload = await receipt();

  // Readable on a phone: the same page at 390 px wide.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await statusSays("Ready.");
  await page.screenshot({ path: join(job.shots, "console-phone.png") });
  seen.problems = problems;
  console.log(JSON.stringify(seen));
} catch (err) {
  await page.screenshot({ path: join(job.shots, "failure.png"), fullPage: true }).catch(() => {});
  console.error(`console flow failed: ${err.stack}\nstatus line: ${await status.textContent().catch(() => "?")}\n` +
    `page problems: ${problems.join("; ")}\nsaw so far: ${JSON.stringify(seen)}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
