"""Selection requests for the paper's four Hebrew words, with dictionary evidence written here.

Fuller than demo/dictionary.ttl on purpose: בד has the eight senses the paper mentions, בר six,
מיתג three, גבר three — definitions in Hebrew and English, usage examples, register labels,
translations and concept labels, as a learner's dictionary gives them. Used by the golden prompt
files and the token-budget test. (Senses beyond the demo's are written for the tests.)
"""

from __future__ import annotations

from kg_rag.model import Candidate, LangText, Mention, SelectionRequest, SenseEvidence

LEX = "https://w3id.org/kg-rag/demo/lex/"
C = "https://w3id.org/kg-rag/demo/concept/"


def he(t: str) -> LangText:
    return LangText(t, "he")


def en(t: str) -> LangText:
    return LangText(t, "en")


def de(t: str) -> LangText:
    return LangText(t, "de")


# (sense local name, concept, pos, rank, usage, definitions, examples, translations, labels)
Sense = tuple[str, str, str, tuple[LangText, ...], tuple[LangText, ...], tuple[LangText, ...],
              tuple[LangText, ...], tuple[LangText, ...]]

BAD: list[Sense] = [
    ("he-bad-n-1", "fabric", "", (),
     (en("Cloth made by weaving or knitting threads, from which clothes, curtains and bedding are sewn."),
      he("חומר גמיש העשוי מחוטים ארוגים או סרוגים, שממנו תופרים בגדים, וילונות ומצעים.")),
     (he("קנינו שני מטרים של בד כותנה כחול כדי לתפור וילון לחדר הילדים."),),
     (en("fabric"), en("cloth"), de("Stoff")), (en("textile"), de("Gewebe"))),
    ("he-bad-n-2", "branch", "", (en("literary"),),
     (en("A branch of a tree, especially a slender one on which leaves, blossoms and fruit grow (literary)."),
      he("ענף של עץ, ובמיוחד ענף דק שעליו צומחים עלים, פרחים ופירות (לשון ספרותית).")),
     (he("בדי הזית הכסופים רעדו ברוח, וזיתים שחורים הבשילו עליהם."),),
     (en("branch"), en("bough"), de("Zweig")), (en("branch"), de("Ast"))),
    ("he-bad-n-3", "linen", "", (en("biblical"),),
     (en("Fine linen from which the garments of the priests were made."),
      he("פשתן משובח שממנו עשו את בגדי הכוהנים.")),
     (he("והכוהן ילבש מדי בד."),), (en("linen"), de("Leinen")), ()),
    ("he-bad-n-4", "pole", "", (en("biblical"),),
     (en("A wooden pole or stave for carrying a heavy object, such as the Ark."),),
     (he("ועשית בדי עצי שיטים."),), (en("pole"), en("stave"), de("Stange")), ()),
    ("he-bad-n-5", "limb", "", (en("literary"), en("rare")),
     (en("A part or limb of the body."),), (he("יאכל בדי עורו."),), (en("limb"),), ()),
    ("he-bad-n-6", "idle-talk", "", (en("literary"),),
     (en("Empty talk or boasting; a lie."),), (he("בדיו לא כן."),), (en("boast"), en("idle talk")), ()),
    ("he-bad-n-7", "canvas", "", (),
     (en("Stretched cloth on which a picture is painted."), he("בד מתוח שעליו מציירים.")),
     (he("הצייר מתח בד חדש על המסגרת."),), (en("canvas"), de("Leinwand")), ()),
    ("he-bad-n-8", "olive-press-beam", "", (en("historical"),),
     (en("The heavy beam of an olive press; also the press itself (בית בד)."),),
     (he("בבית הבד סחטו את הזיתים."),), (en("press beam"), de("Pressbalken")), ()),
]

BAR: list[Sense] = [
    ("he-bar-n-1", "bar", "noun", (),
     (en("A place where alcoholic drinks such as beer and wine are served at a long counter; a pub."),
      he("מקום בילוי שבו מגישים משקאות אלכוהוליים, כמו בירה ויין, ליד דלפק ארוך; פאב.")),
     (he("אחרי העבודה נפגשנו בבר השכונתי ושתינו בירה קרה."),),
     (en("bar"), en("pub"), de("Kneipe")), (de("Bar"),)),
    ("he-bar-n-2", "wilderness", "noun", (),
     (en("Open country that is not cultivated or settled; the wild."),
      he("שטח פתוח שאינו מעובד ואינו מיושב; הטבע הפראי.")),
     (he("הרועים יצאו עם העדרים אל הבר."),),
     (en("wilderness"), en("the wild"), de("Wildnis")), ()),
    ("he-bar-adj-1", "wild", "adjective", (),
     (en("Living or growing in nature, not tamed or cultivated."), he("שחי או צומח בטבע, לא מבוית.")),
     (he("חיות בר מסתובבות ביער."),), (en("wild"), de("wild")), ()),
    ("he-bar-n-3", "grain", "noun", (en("biblical"),),
     (en("Grain, corn."),), (he("ויוסף צבר בר כחול הים."),), (en("grain"), de("Getreide")), ()),
    ("he-bar-adj-2", "pure", "adjective", (en("literary"),),
     (en("Pure, clean (as in בר לבב, pure of heart)."),), (), (en("pure"),), ()),
    ("he-bar-n-4", "son", "noun", (en("Aramaic"),),
     (en("Son (in names and fixed phrases such as בר מצווה)."),), (), (en("son"),), ()),
]

MITAG: list[Sense] = [
    ("he-mitag-v-1", "branding", "verb", (),
     (en("To give a product, company or person a brand, a recognisable name and image, for marketing."),
      he("לתת למוצר, לחברה או לאדם מותג, שם ותדמית מוכרים, לצורכי שיווק.")),
     (he("החברה מיתגה מחדש את המשקה לקהל צעיר."),),
     (en("to brand"), de("eine Marke aufbauen")), ()),
    ("he-mitag-v-2", "self-restraint", "verb", (en("rare"), en("literary")),
     (en("To restrain or curb, as with a bridle (מתג); to hold back an urge."),
      he("לרסן, לעצור כמו במתג; לכבוש דחף.")),
     (he("הוא מיתג את כעסו ולא ענה."),),
     (en("to restrain"), en("to curb"), de("zügeln")), ()),
    ("he-mitag-v-3", "network-switching", "verb", (en("technical"),),
     (en("To route traffic through a switch (networking)."),), (), (en("to switch"),), ()),
]

GEVER: list[Sense] = [
    ("he-gever-n-1", "man", "noun", (),
     (en("An adult male person."), he("אדם בוגר ממין זכר.")),
     (he("גבר גבוה נכנס לחדר."),), (en("man"), de("Mann")), ()),
    ("he-gever-n-2", "rooster", "noun", (en("rare"), en("Talmudic")),
     (en("A rooster, a cock (rabbinic Hebrew, as in קריאת הגבר, cockcrow)."),
      he("תרנגול (לשון חכמים, כמו בקריאת הגבר).")),
     (he("קם בקריאת הגבר."),), (en("rooster"), en("cock"), de("Hahn")), ()),
    ("he-gever-n-3", "valiant-man", "noun", (en("literary"),),
     (en("A strong or valiant man, a hero."),), (), (en("strong man"),), ()),
]

SENTENCES = [
    ("הפירות העמיסו על הבדים", "הבדים", "בד", BAD),
    ("שמירה על הבר עמדה במוקד עיסוקיו", "הבר", "בר", BAR),
    ("הוא מיתג את הדחף לצפות בחדשות", "מיתג", "מיתג", MITAG),
    ("הגבר קרא בקול עם הזריחה", "הגבר", "גבר", GEVER),
]


def request(sentence: str, surface: str, lemma: str, senses: list[Sense],
            target_lang: str | None = "en") -> SelectionRequest:
    start = sentence.index(surface)
    evidence = []
    for n, (name, concept, pos, usage, defs, exs, trs, labels) in enumerate(senses, start=1):
        cand = Candidate(concept=C + concept, sense=LEX + name, entry=LEX + name.rsplit("-", 1)[0],
                         lemma=lemma, lang="he", rank=n, pos=pos or "noun")
        evidence.append(SenseEvidence(cand, definitions=defs, examples=exs, labels=labels,
                                      translations=trs, usage=usage))
    mention = Mention(start, start + len(surface), surface, "he",
                      tuple(e.candidate for e in evidence))
    return SelectionRequest(mention, sentence, "he", tuple(evidence), target_lang=target_lang)


def paper_requests(target_lang: str | None = "en") -> list[SelectionRequest]:
    return [request(*row, target_lang=target_lang) for row in SENTENCES]


RIGHT = {"הבדים": "branch", "הבר": "wilderness", "מיתג": "restrain", "הגבר": "rooster"}
