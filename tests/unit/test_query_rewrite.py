"""Questions that name the owner, asked in the owner's voice; a third party's name stays."""

from core.adapters.rules.query_words import owner_voice


def test_the_owners_name_becomes_the_first_person():
    assert owner_voice("What did Caroline research?", "Caroline") == "What did I research?"
    assert owner_voice("When did Caroline's dog get sick?", "Caroline") == "When did my dog get sick?"
    assert owner_voice("Where did Caroline’s sister live?", "Caroline") == "Where did my sister live?"


def test_a_full_display_name_and_its_first_word_both_match():
    assert owner_voice("What does Jon Smith do? Jon said", "Jon Smith") == "What does I do? I said"


def test_other_names_and_words_that_contain_the_name_stay():
    assert owner_voice("What did Melanie tell Caroline?", "Caroline") == "What did Melanie tell I?"
    assert owner_voice("Who is Jonathan?", "Jon") == "Who is Jonathan?"
    assert owner_voice("What did Melanie paint?", "Caroline") == "What did Melanie paint?"


def test_no_name_leaves_the_query_unchanged():
    assert owner_voice("What did Caroline research?", None) == "What did Caroline research?"
    assert owner_voice("What did Caroline research?", "  ") == "What did Caroline research?"
