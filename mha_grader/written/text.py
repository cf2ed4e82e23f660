"""Turn free text into sentences of normalised, stemmed tokens.

Steps, in order: spell out contractions and notation (``don't`` -> ``do not``, ``W_q`` -> ``wq``,
``d_{model}`` -> ``d_model``), split into sentences, tokenise, replace multi-word phrases by one
canonical token (``number of heads`` -> ``num_heads``, from the rubrics' ``[phrases]`` tables),
then stem with the Snowball English stemmer. Rubric phrasings go through the same steps, so both
sides meet on the same stems.
"""

from __future__ import annotations

import re
import re._constants as _sre  # the syntax tree's node kinds, for _needs
import re._parser as _sre_parse
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cache, lru_cache

import snowballstemmer

# Words that never change what a claim says; they are skipped when measuring the distance between
# the words of a phrasing, so "d_model must be divisible" is as close as "d_model divisible".
FILLERS = frozenset(
    """a an the is are was were be been being am must should has have had having do does did
    to that this these those it its they them their there just also only really simply still
    will would can could may might shall need needs needed has got gets get of""".split()
)
# Words that reverse the claim that follows them in the same clause. ("Otherwise X can not be
# split" says X can be split: stance.py reads "otherwise" and "else".)
NEGATORS = frozenset("not no never none nothing nobody neither nor without cannot".split())
# Words that say a thing is possible, not that it was found ("they might differ").
POSSIBILITY = frozenset("might may possibly could".split())
# Predicates that deny what they are said of: "the split into equal heads fails" is "the
# split does not work"; counted as a negation after a claim, in its clause.
FAILURES = frozenset("fail fails failed failing breaks broke crash crashes crashed".split())
# Tokens that end a clause: negation does not reach across them.
CLAUSE_BREAKS = frozenset(
    ", ; : ( ) — – - but while whereas although though because since so yet instead".split()
)
# Punctuation that separates two claims: a phrasing never matches across it.
HARD_BREAKS = frozenset("; : — –".split())
# Function words that make a text a sentence rather than a list of keywords (negations and
# "same"-like words excluded: a keyword list often has "no" or "same" in it).
FUNCTION_WORDS = FILLERS | frozenset(
    """and or but because so since which who what when where why how if than then as for with by
    in on at from into each every all both i we you he she my our your his her""".split()
)

# Verbs whose "up"/"down" is a particle ("split up", "broken down"), not a change of amount.
PARTICLE_VERBS = frozenset(
    """split splits splitting broke broken break breaks breaking cut cuts cutting add adds added
    divide divides divided dividing carve carves carved parcel parcels parcelled parceled
    adding sum sums summed end ends ended chop chops chopped line lines lined speed speeds sped
    slow slows slowed boil boils boiled narrow narrows narrowed scale scales scaled look looks
    looked give gives gave given pick picks picked wind winds shut shuts stack stacks stacked
    go goes went gone going turn turns turned show shows showed come comes came pile piles
    piled back backs backed hold holds held set sets setting mix mixes mixed tone toned calm
    calmed cool cooled round rounded bring brings brought build builds built take takes took
    taken make makes made sit sits sat stand stands stood line write writes wrote written
    write set up down shows""".split()
)

# LaTeX and math symbols read as the words they stand for ("$h \mid d_{model}$" is "num_heads
# divides d_model"); markup that carries no meaning (\mathrm, braces, $) is dropped.
# an abbreviation's full stop: part of it when the sentence goes on in lower case ("approx. 256
# params", "dims. per head"), the sentence's end before a capital or the end of the answer
# ("each head gets d_model/h dims. No head has its own mtxs.")
_ABBR_DOT = r"(?:\.(?=[ \t]+(?-i:[a-z0-9(\[])))?"

_MATH: list[tuple[str, str]] = [
    # code's truth test of a remainder: "if d_model % num_heads: raise" runs when it is not 0
    (r"\bif[ \t]+([\w.]+)[ \t]*%[ \t]*([\w.]+)[ \t]*:", r"if \1 % \2 != 0:"),
    (r"\$+", " "),
    # the scale taken at the model's full width, "/ sqrt(d_model)", "√d_model": one token of its
    # own (each head scales by its own width: a rubric names the full width as a wrong scale)
    (
        r"(?:1[ \t]*/[ \t]*)?(?:\\?sqrt|√|square[ \t]+root[ \t]+of)[ \t]*[({]?[ \t]*(?:the[ \t]+)?"
        r"(?:d_?\{?model\}?|model[ \t]+(?:width|dimension|dim|size))[ \t]*[)}]?(?![ \t]*/)",
        " sqrt_model ",
    ),
    # the attention's scale, "1/sqrt(d_k)", "√d_head", "the square root of d_k": the scaling, not
    # what a head's width is (one token that no rubric reads as the head's width)
    (
        r"(?:1[ \t]*/[ \t]*)?(?:\\?sqrt|√|square[ \t]+root[ \t]+of)[ \t]*[({]?[ \t]*(?:the[ \t]+)?"
        r"(?:d_?\{?(?:k|head|h|model)\}?|dk|dh|key[ \t]+(?:width|dimension|dim|size)"
        r"(?:[ \t]+d_?k\b)?)[ \t]*[)}]?",
        " sqrt_scale ",
    ),
    (r"\\(?:mathrm|mathit|mathbf|text|textrm|textit|operatorname|boldsymbol)\s*", ""),
    (r"\\(?:left|right|big|Big|bigg|Bigg)(?![a-z])", ""),
    (r"(?:\\in\s*|∈\s*)(?:\\mathbb\s*\{?[nz]\}?|[ℕℤ])", " is an integer "),
    (r"\\mathbb\s*\{?r\}?|ℝ", " "),
    (r"\\in(?![a-z])|∈", " in "),
    (r"\\(?:times|cdot|ast)(?![a-z])|[·⋅∗]", " x "),
    (r"\\(?:neq|ne)(?![a-z])", " != "),
    (r"\\(?:approx|sim|simeq)(?![a-z])|≈|~(?=\s*\d)", " about "),
    (r"\\(?:equiv|coloneqq)(?![a-z])|≡|:=", " = "),
    (r"\\(?:mid|vert)(?![a-z])|∣", " divides "),
    (r"\\(?:bmod|pmod|mod)(?![a-z])", " mod "),
    (r"\\(?:to|rightarrow|Rightarrow|implies|mapsto)(?![a-z])|↦", " -> "),
    (r"\\(?:dots|ldots|cdots|quad|qquad|top|intercal)(?![a-z])|[{}]|\\[,;!]", " "),
    (r"\\(?:sqrt|frac|sum|prod|max|min|exp|log)(?![a-z])", " "),
    (r"\\([a-z]+)", r" \1 "),  # \alpha, \softmax: the word itself
    (r"↑", " increases "),
    (r"↓", " decreases "),
    (r"²", "^2"),
    # code's power and a decimal without its 0: "4 * d_model**2", "[0, 0, .424, .576, 0]"
    (r"\*\*", "^"),
    (r"(?<![\w.])\.(?=\d)", "0."),
    # "i.e." and "e.g." end no sentence
    (r"\bi\.\s?e\.", "that is"),
    (r"\be\.\s?g\.", "for example"),
    (r"\bvs\.", "vs"),
    # note form: "h0 -> tok 4", "w/o", "b/c"
    (r"\bh(\d)\b", r"head \1"),
    (r"\b(\d)h\b", r"\1 head"),
    (r"\btoks?\b", "token"),
    (r"\bw/o\b", "without"),
    (r"\bb/c\b", "because"),
    (r"\bw/(?=\s)", "with"),
    (r"\bb/w\b", "between"),
    # a product in a note: "d_model = k * num_heads" (not markdown's *emphasis*)
    (r"(?<=[a-z_)])(?: \* |\*)(?=[a-z_(])", " x "),
    # a variable's name for a count: "n_softmax", "num_softmaxes", "softmax_count"
    (r"\b(?:n|num|nb|no)_(?!heads?\b)([a-z]+)\b", r"number of \1"),
    (r"\b(?!heads?_)([a-z]+)_count\b", r"number of \1"),
    # one count given for two head counts ("1024 parameters with 1 head and 1024 with 2 heads",
    # a student's own d_model): the same count, as "256 for both" is
    (
        r"\b(\d{2,})\b((?:\s+[a-z_]+){0,2}?\s+(?:with|for|at|using)\s+(?:1|one|a single)\s+"
        r"heads?,?\s+and\s+(?:also\s+)?)\1\b",
        r"\1\2the same count \1",
    ),
    # one count "either way" (with one head or two): the same count in both cases ("I hold 256
    # parameters either way"; not a shape, "8 x 8 either way", which is the why)
    (
        r"\b(\d{2,})((?:\s+[a-z_]+){0,2}?)\s+(?:either way|whichever way)\b",
        r"\1\2 in both cases",
    ),
    # "..., whether with one head or with two": the same in both cases
    (
        r",?[ \t]+whether[ \t]+(?:with[ \t]+)?(?:one|1|a single)[ \t]+heads?[ \t]+or[ \t]+"
        r"(?:with[ \t]+)?(?:two|2|more|several|many)(?:[ \t]+heads)?\b",
        " in both cases",
    ),
    # a change noted as "= h (was 1)": from 1 to h
    (r"=\s*([\w/]+(?:\s*/\s*\w+)?)\s*\(\s*was\s+([\w/]+(?:\s*/\s*\w+)?)\s*\)", r"from \2 -> \1"),
    # a note's abbreviations ("shapes indep. of num_heads", "fewer dims per head", "same
    # #params"): the words they stand for, so that rubric words, their synonyms and stems apply
    (r"\bindep(?:end)?\b" + _ABBR_DOT, "independent"),
    (r"\bindiv\b" + _ABBR_DOT, "individual"),
    (r"\bsep\b\.?(?=\s+[a-z])", "separate"),
    (r"\bdims\b" + _ABBR_DOT, "dimensions"),
    (r"\bdim\b" + _ABBR_DOT, "dimension"),
    (r"(?<=\d)-?dims?\b", " dimensions"),
    # a noun's abbreviation keeps its full stop, which may end the sentence ("slice of cols. own
    # W per head: no."), unless a number follows ("cols. 0-3")
    (r"\bparams\b(?:\.(?=\s*\d))?", "parameters"),
    (r"\bparam\b(?:\.(?=\s*\d))?", "parameter"),
    (r"\bdiffs?\b" + _ABBR_DOT, "different"),
    (r"\bapprox\b" + _ABBR_DOT, "about"),
    (r"\bequiv\b" + _ABBR_DOT, "equivalent"),
    (r"\bavg\b" + _ABBR_DOT, "average"),
    (r"\battn\b" + _ABBR_DOT, "attention"),
    (r"\bseq\b" + _ABBR_DOT, "sequence"),
    (r"\bcols\b(?:\.(?=\s*\d))?", "columns"),
    (r"\bcol\b(?:\.(?=\s*\d))?", "column"),
    (r"\bprojs\b(?:\.(?=\s*\d))?", "projections"),
    (r"\bproj\b(?:\.(?=\s*\d))?", "projection"),
    (r"\bmtx\b(?:\.(?=\s*\d))?|\bmatx\b(?:\.(?=\s*\d))?", "matrix"),
    (r"\b(?:mtxs|mats)\b" + _ABBR_DOT, "matrices"),
    (r"\brels\b" + _ABBR_DOT, "relationships"),
    (r"\bcalc\b" + _ABBR_DOT, "compute"),
    (r"\b(?:bc|bcs|bcoz|cuz|coz)\b", "because"),
    (r"\bea\b\.?(?=\s+[a-z])", "each"),
    (r"\s+&\s+", " and "),
    # a note's "#softmaxes up, width per head down": a quantity, then "up"/"down" ending the
    # clause, is said to increase/decrease (not a verb's particle: "split up", "broken down")
    (
        r"\b([a-z0-9_]+)\)?\s+(up|down)\b(?=\s*(?:[,;.)]|$|\n|and\b|but\b|while\b|whereas\b))",
        lambda m: (
            m.group(0)
            if m.group(1).lower() in PARTICLE_VERBS
            else m.group(0)[: m.start(2) - m.start(0)]
            + ("increases" if m.group(2).lower() == "up" else "decreases")
        ),
    ),
    # "#softmaxes", "#params": the number of
    (r"#(?=[a-z])", " number of "),
    # an integer divides another: "h | d_model" (not a table's cell wall: words on both sides)
    (r"(?<=\w)\s+\|\s+(?=\w)", " divides "),
]


def _table_row(match: re.Match[str]) -> str:
    """A Markdown table's row, "| Wo | one per head | d_head x d_model |", as a note's line:
    its first cell the label, the others what is said of it ("Wo: one per head; d_head x
    d_model.")."""
    cells = [c.strip() for c in match.group(1).split("|")]
    cells = [c for c in cells if c]
    if not cells:
        return ""
    return cells[0] + (": " + "; ".join(cells[1:]) if cells[1:] else "") + "."


_RECORD_ITEM = re.compile(
    r'"([^"\n]{1,60})"\s*:\s*("(?:[^"\\\n]|\\.)*"|\[[^\[\]\n]*\]|[^,{}\[\]\n]+?)\s*(?=,|\}|$)'
)
# a record's confidence, as a hedge: "high" (or sure, certain) costs nothing
_UNSURE_CONFIDENCE = frozenset("medium moderate low mid unsure guess guessing 0.5 50%".split())


def _record_value(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith("["):
        return ", ".join(_record_value(v) for v in re.findall(r'"[^"]*"|[^,\s][^,]*', raw[1:-1]))
    if raw.startswith('"'):
        return raw[1:-1].replace('\\"', '"')
    return {"true": "yes", "false": "no", "null": "none"}.get(raw.lower(), raw)


def _record(match: re.Match[str]) -> str:
    """A JSON-like record, '{"own_matrices_per_head": false, "why": "...", "confidence":
    "medium"}', as a note's lines: each key a label (its underscores spaces), its value what is
    said of it ("own matrices per head: no."); a "confidence" that is not high hedges the record
    ("I think" before it), a high one is no claim."""
    lines = []
    hedged = False
    for key, raw in _RECORD_ITEM.findall(match.group(0)):
        value = _record_value(raw)
        label = key.strip().replace("_", " ")
        if label.lower() in ("confidence", "certainty", "confidence level", "sure"):
            hedged = hedged or value.strip().lower() in _UNSURE_CONFIDENCE
            continue
        lines.append(f"{label}: {value.rstrip('.')}.")
    if not lines:
        return match.group(0)
    if hedged:
        lines.append("I think so.")
    return "\n\n" + "\n\n".join(lines) + "\n\n"


# Role-play in the first person of a part of the mechanism ("I am head 0. Looking at token 0, I
# give ...", "I am the softmax. With h heads there are h of me"): the role names the part, so
# what the part says of itself is said of it: "I", "me", "my" read as the part (not in the
# student's own cues, "I think", "I'm not sure"), "h of me" as h of them, and a head's "we" as
# the heads.
_ROLE = (
    r"\A[ \t\n]*(?:[-*][ \t]+)?i(?:'m| am) (the |a )?(head[ \t]*\d+|softmax|layer|attention layer"
    r"|multi-?head attention(?: layer)?|module|w_?[qkvo]|query projection|key projection|value "
    r"projection|projections?|output projection|concatenation|split|reshape)[ \t]*[.:,;!—–-]"
    r"[\s\S]*"
)
_ROLE_CUES = frozenset(
    """think believe guess suppose reckon suspect feel assume expect hope doubt bet wonder know
    ran run checked check tested test measured printed found saw got wrote mean meant
    would""".split()
)


def _role(match: re.Match[str]) -> str:
    role = match.group(2).lower().strip()
    name = f"{match.group(1) or ''}{role}".strip()
    if name.startswith("a "):
        name = "the " + name[2:]
    the = name if name.startswith("the ") or role.startswith("head") else f"the {name}"
    plural = role + ("es" if role.endswith(("x", "s")) else "s")
    text = match.group(0)
    body = text[match.end(2) :]
    body = re.sub(r"\b(\w+) of me\b", rf"\1 {plural}", body, flags=re.I)

    def person(m: re.Match[str]) -> str:
        word, after = m.group(1), m.group(3)
        if word.lower() == "i" and after.lower() in _ROLE_CUES:
            return m.group(0)  # (the student's own cue: "I think", "I checked")
        swapped = {"i": the, "me": the, "my": f"{the}'s", "myself": the, "mine": f"{the}'s"}
        return swapped[word.lower()] + m.group(2)

    body = re.sub(r"\bi(?:'m| am)\b", f"{the} is", body, flags=re.I)
    body = re.sub(r"\b(i|me|my|myself|mine)\b(\s*(\w*))", person, body, flags=re.I)
    if role.startswith("head"):
        body = re.sub(r"\bwe\b", "the heads", body, flags=re.I)
    return f"{the[0].upper()}{the[1:]} here{body}"


# SOAP notes ("S: ...", "O: ...", "A: ...", "P: ..."): the subjective line is what the student
# felt or expected beforehand and the plan what they will do next, neither a claim; the
# observation and the assessment are theirs, read without their labels.
_SOAP = r"(?m)\A(?=(?:[\s\S]*^[ \t]*[soap][ \t]*:){3})(?=[\s\S]*^[ \t]*a[ \t]*:)[\s\S]*"
_SOAP_LINE = re.compile(r"^[ \t]*([soap])[ \t]*:[ \t]*(.*)$", re.I)


def _soap(match: re.Match[str]) -> str:
    lines = match.group(0).split("\n")
    labelled = [_SOAP_LINE.match(line) for line in lines]
    if sum(1 for m in labelled if m) < 3:
        return match.group(0)
    kept = []
    for line, m in zip(lines, labelled, strict=True):
        if m is None:
            kept.append(line)
        elif m.group(1).lower() in "oa":
            kept.append(m.group(2))
    return "\n\n".join(k for k in kept if k.strip())


# A multiple choice the student writes out: options "(a) ...", "(b) ..." and a circled one, "->
# (b)": the options are no claims, the circled option is asserted (with what the choice line
# adds: "-> (b), and my run agreed"); a choice left between two ("-> (a) or (c), can't decide")
# asserts neither.
_CHOICE = (
    r"(?m)\A(?=(?:[\s\S]*?^[ \t]*\([a-h]\)[ \t]+\S){2})[\s\S]*^[ \t]*(?:->|→|=>)[ \t]*"
    r"\([a-h]\)[\s\S]*"
)
_OPTION = re.compile(r"^[ \t]*\(([a-h])\)[ \t]+(.*?)[ \t;,.]*$", re.I)
_CHOSEN = re.compile(r"^[ \t]*(?:->|→|=>)[ \t]*\(([a-h])\)(.*)$", re.I)


def _choice(match: re.Match[str]) -> str:
    options: dict[str, str] = {}
    chosen = None
    others = []
    for line in match.group(0).split("\n"):
        if (m := _CHOSEN.match(line)) is not None:
            chosen = m
        elif (m := _OPTION.match(line)) is not None:
            options[m.group(1).lower()] = m.group(2)
        else:
            others.append(line)
    if chosen is None or len(options) < 2:
        return match.group(0)
    rest = chosen.group(2).strip()
    if re.match(r"(?:or|and|/|,)\s*\(?[a-h]\)", rest, re.I):
        return "\n".join(others)  # undecided between options: neither asserted
    said = options.get(chosen.group(1).lower(), "")
    rest = re.sub(r"^[,;:.\s-]+", "", rest)
    return "\n\n".join(x for x in [*others, said + ".", rest] if x.strip(" ."))


_RECORD = r'\{[ \t\n]*"[^"\n]{1,60}"[ \t]*:[^{}]*\}'
_RECORD_RE = re.compile(_RECORD)


def unrecord(text: str) -> str:
    """The answer with its JSON-like records read as notes (their quotation marks are a
    format's, not quotations or scare quotes)."""
    return _RECORD_RE.sub(_record, text) if "{" in text else text


_REWRITES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p, re.IGNORECASE), r)
    for p, r in [
        (r"[’‘`´]", "'"),
        # a JSON-like record: its keys and values as a note's lines
        (_RECORD, _record),
        (_ROLE, _role),
        (_SOAP, _soap),
        (_CHOICE, _choice),
        # "ELI5: <a kid's version>" is an image with nothing mapped; what follows "For grown-ups:"
        # is the answer
        (r"(?m)^[ \t]*eli5[ \t]*:[^\n]*?(?=for grown-?ups[ \t]*:|\n|$)", ""),
        (r"\bfor grown-?ups[ \t]*:[ \t]*", ""),
        # meeting minutes: what is NOTED (others' views, no verdict), an ACTION (a plan) and what
        # was AGREED without the student are not the student's claims; AGREED items are
        (r"(?m)^[ \t]*(?-i:NOTED|ACTIONS?|ACTION ITEMS?)\b[^\n:]{0,40}:[^\n]*", ""),
        (r"(?m)^[ \t]*(?-i:AGREED)[ \t]*\((?:not by me|without me|over my objection)\)[^\n]*", ""),
        # a usage label calling a sense contested ("... (disputed)."): not the student's
        (
            r"[ \t]*\((?:disputed|contested|debated|controversial)\)(?=[ \t]*[.;]?[ \t]*(?:\n|$))",
            ", but I can not say for sure",
        ),
        # voice dictation: spoken punctuation ("... tokens comma only ... full stop") and words
        # the dictation splits ("soft maxes", "sub spaces") read as typed
        (r"[ \t]+comma\b[ \t]*(?=[\s\S]*\bfull stop\b)", ", "),
        (r"[ \t]+full stop\b[ \t]*", ". "),
        (r"\bsoft[ \t]+max(es|s)?\b", r"softmax\1"),
        (r"\bsub[ \t]+spaces?\b", "subspaces"),
        # archaic "but" for "only": "what difference there be is but noise"
        (
            r"\b(is|are|was|were|be)[ \t]+but[ \t]+(?=(?:a |an |the )?\w+[ \t]*(?:[.;!]|$))",
            r"\1 only ",
        ),
        # a revision's label opening a line ("EDIT: ...", "Update 2 - ...", "Correction: ..."):
        # what follows is the student's next sentence ("EDIT: actually, not true." judges the
        # answer before it)
        (r"(?m)^[ \t]*(?:edit(?:ed)?|update|correction)(?:[ \t]*\d+)?[ \t]*[:–—-][ \t]*", ""),
        # what a reader of the rendered Markdown sees: struck-out text ("~~each over d_model~~")
        # is withdrawn, as an EDIT's "scratch that", and says nothing; an unticked box ("- [ ]
        # ...") asserts nothing, a ticked one ("- [x] ...") asserts its item
        (r"~~(?:(?!~~)[^\n])+~~", ""),
        (r"(?m)^[ \t]*(?:[-*+][ \t]+)?\[ \][^\n]*", ""),
        (r"(?m)^([ \t]*(?:[-*+][ \t]+)?)\[x\][ \t]*", r"\1"),
        # a line, or a list, headed by doubt ("Not sure: X", "Unsure:" over bullets): X is
        # doubted by its heading, neither claimed nor denied (a "Sure:" line stays claimed)
        (
            r"(?m)^[ \t]*(?:[-*+•][ \t]+)?(?:not (?:so |too |entirely |quite |really )?sure|unsure|"
            r"uncertain|doubtful|not certain|no idea|unclear|open questions?)(?: about)?[ \t]*:"
            r"(?:[^\n]*[^\s:][^\n]*|[ \t]*(?:\n[ \t]*[-*+•][^\n]*)+)",
            "",
        ),
        # a news label opening a line: a headline's register, not a word of the claim ("BREAKING:
        # heads share ..." breaks nothing); a rumour's label reports what it heads
        (
            r"(?m)^[ \t]*(?:breaking(?: news)?|exclusive|explainer|confirmed|developing|opinion|"
            r"analysis|just in|fact check)[ \t]*[:–—-][ \t]*",
            "",
        ),
        (
            r"(?m)^[ \t]*(?:rumou?r|unverified|unconfirmed|hearsay|gossip)[ \t]*[:–—-][ \t]*",
            "Rumour has it that ",
        ),
        # a Markdown table: its rule row goes, each other row reads as a line of notes
        (r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$", ""),
        (r"(?m)^[ \t]*\|(.*)\|[ \t]*$", _table_row),
        # notation first, while LaTeX's braces still delimit it: d_{model}, W^{Q}, W_i^Q, XW_Q
        (r"(?<=[a-z])(?=w_\{?[qkvo]\}?(?![a-z]))", " "),
        (r"\bd_?\{?(model|k|v|head)\}?", r"d_\1"),
        (r"\bd_\{?h\}?(?![a-z])", "d_head"),
        (r"\bw\s*\^\s*\{?([qkvo])\}?(?![a-z])", r"w\1"),
        (r"\bw_\{?[a-z0-9]\}?\s*\^\s*\{?([qkvo])\}?(?![a-z])", r"w\1"),
        (r"\bw_?\{?([qkvo])\}?(?![a-z])", r"w\1"),
        # NumPy's column slice, "Q[:, i*d_k:(i+1)*d_k]": a slice of Q's columns
        (r"\b([qkv])\s*\[\s*(?::|\.\.\.)\s*,[^\]]*:[^\]]*\]", r" a column slice of \1 "),
        *_MATH,
        (r"×", " x "),
        (r"\s*(?:!=|≠|=/=)\s*", " not equal to "),
        # a shape in brackets between words, "the same four (8, 8) matrices", "are (d_model,
        # d_model) matrices": the shape as "8 x 8" (its comma no break in the clause; not after
        # a one-letter name, "X (3, 8) with 2 heads", whose "x" would join a product)
        (
            r"(?:(?<=[a-z]{2} )|(?<=\d ))\([ \t]*(\d+|d_model|d_head|d_k|d_v)[ \t]*,[ \t]*"
            r"(\d+|d_model|d_head|d_k|d_v)[ \t]*\)(?=[ \t]+[a-z])",
            r"\1 x \2",
        ),
        # a call's value: "np.allclose(weights[0], weights[1]) -> False" says what allclose
        # returned (its arguments are no words of the claim); "... is False", "... was [256,
        # 256]": a value after "is"/"was" too; "... printed False", "... showed False" likewise
        (
            r"\b([a-z_][\w.]*)[ \t]*\([^()\n]*\)'?[ \t]*(?:->|=>|→|==|returns|returned|gives|gave"
            r"|printed|prints|showed|shows|yielded|yields|outputs|output"
            r"|(?:is|was)(?=[ \t]*'?[ \t]*(?:true|false|none|-?\d|\[|\()))[ \t]*",
            r"\1 returned ",
        ),
        # a word put in brackets inside a clause, "there are no (separate) matrices", "cut
        # (column-wise) into chunks": part of the clause, not an aside that breaks it
        (r"(?<=[a-z] )\(([a-z][a-z_-]*)\)(?= [a-z])", r"\1"),
        # (an arrow that opens a line of its own leaves the line break: "...\n\n→ no per-head
        # matrices" is a note of its own, not part of the line before)
        (r"[ \t]*(?:->|=>|→)\s*", " so "),
        (r"\bcan't\b|\bcannot\b", "can not"),
        # the stance cues' words as students often misspell them (rubric words have typo
        # tolerance of their own; cue phrases are matched as written)
        (r"\bbel(?:ei|i)v(e|es|ed|ing)\b", r"believ\1"),
        (r"\bmis+con[cs]?e(?:p|pt)(?:s|t)?ion(s?)\b", r"misconception\1"),
        # "its a myth", "its not true": "it's" typed without its apostrophe
        (
            r"\bits\s+(?=(?:a|an|not|false|wrong|true|untrue|incorrect|nonsense|like|because)\b)",
            "it is ",
        ),
        (r"\bcont(?:a|ra)ry\b", "contrary"),
        (r"\bas+ume(s|d)?\b", r"assume\1"),
        (r"\bppl\b|\bpoeple\b|\bpeolpe\b", "people"),
        (r"\bdefin(?:a|i)tely\b", "definitely"),
        # "unequal chunks" denies "equal chunks"
        (r"\bun(equal|equally|even|evenly)\b", r"not \1"),
        (r"\bnon-?(integer|whole)\b", r"not \1"),
        (r"\bwon't\b|\bwont\b", "will not"),
        (r"n't\b", " not"),
        # the same typed without the apostrophe: "dont", "doesnt", "cant", "thats", "im"
        (r"\bcant\b", "can not"),
        (
            r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should|must|need)nt\b",
            r"\1 not",
        ),
        # "that's not the case": the verb stays (a possessive "'s" goes, below)
        (r"\b(that|it|there|what|here|this|which|who)(?:'s|s)\s+(?=not\b)", r"\1 is "),
        (r"\bthat'?s\b", "that is"),
        (r"\bim\b", "i am"),
        # "they'd differ": the conditional mood is what a supposition leads to ("I'd multiplied",
        # a past perfect, and "I'd say", a hedge, keep their readings)
        (r"\b(they|it|he|she|that|this|there|each|both|we|you)'d\b(?!\s+\w+ed\b)", r"\1 would"),
        (r"'s\b|'re\b|'ve\b|'ll\b|'d\b", ""),
        (r"\bnum_heads\b|\bn_heads\b|\bnheads\b", "num_heads"),
        (r"(\d)\s*[x×*]\s*(\d)", r"\1 x \2"),
        # a bare d beside an operator is d_model: "d % h == 0", "d/h", "h | d", "4*d*d"
        (r"(?<![\w'’.])d(?=\s*[/%*^²|=])", "d_model"),
        (r"(?<=[/%*^|=])(\s*)d(?![\w'’])", r"\1d_model"),
        (r"(?<= x )d(?![\w'’])|(?<=\bdivides )d(?![\w'’])", "d_model"),
        (r"\s*%\s*", " mod "),
        # ", they share one set": a new subject starts a new claim, which a phrasing must not
        # reach into from the clause before (nor a negation of that clause)
        (r",(?=\s+(?:they|it|we|this|these|those|which|there)\b)", " ;"),
        # "nothing about the projections is duplicated": no projection is
        (r"\bnothing\s+(?:about|in|of)\s+(?:the\s+)?", "no "),
        # "split the output rather than add weights": the contrast is a claim of its own
        (r"\s*,?\s+rather than\b", ", not"),
        # "a reshape, not new weights": the contrast is a claim of its own
        (r",(?=\s+(?:and\s+|but\s+)?not\b)", " ;"),
        # "d_head is not an integer and the features ...": a negation does not reach across
        # "and" into a clause with a subject of its own
        (
            r"(?<![,;])\s+and\s+(?=(?:the|a|an|each|every|all|no|they|it|we|this|these|those|"
            r"there|its|their|one|some)\s)",
            ", and ",
        ),
        # a verse's line breaks written inline, " / " between two plain words ("It must be
        # divisible / by num_heads"): the sentence runs on (not a quotient: "d_model / num_heads")
        (r"(?<![\w/])([a-z]{3,})[ \t]+/[ \t]+([a-z]{2,})\b(?![_/])", r"\1 \2"),
        (r"\s*/\s*", " / "),
    ]
]
# (a quotation's closing mark after its full stop ends the sentence too: 'X wrote: "...". I agree.')
# (a slide's bullets, "•", open items as "-" and "*" do)
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+|(?<=[.!?][\"'”’])\s+|\n\s*\n|\n\s*(?:[-*+•◦▪‣]|\d+[.)])\s+"
)
_TOKEN = re.compile(r"[a-z0-9_]+(?:\.[0-9]+)?|[,;:()—–/=+^]|(?<=\s)-(?=\s)", re.IGNORECASE)
_STEMMER = snowballstemmer.stemmer("english")
# A run-on "sentence" is read in pieces of this many tokens: matching time stays linear in the
# length of an answer, however it is punctuated.
MAX_SENTENCE_TOKENS = 80


TYPO_MIN_LENGTH = 5  # shorter words must be spelled right: too many real words are one edit apart
TYPO_MIN_RATIO = 0.88
TRANSPOSE_MIN_LENGTH = 7  # two letters swapped ("matrcies", "seperate"): one slip, not two
ANY_SLIP_MIN_LENGTH = 8  # one slip of any kind ("seperate")
VOWELS = frozenset("aeiouy")
TWO_EDITS_MIN_LENGTH = 10  # a long word keeps its identity through two slips ("projecitons")


@cache
def small_typo(a: str, b: str) -> bool:
    """A small typo: same first letter and a high similarity ratio, on words of some length; in
    longer words, one slip of any kind (a letter swapped with its neighbour, left out, added or
    replaced), and in long words two."""
    shorter = min(len(a), len(b))
    if shorter < TYPO_MIN_LENGTH or a[0] != b[0]:
        return False
    # Letters the two share, counted with repeats, bound both tests from above: a ratio needs
    # ``2 * matched / (len(a) + len(b))`` of them, two slips leave all but two of the longer's.
    # Most pairs asked (every answer word against a rubric's words) fail both, cheaply.
    ratio_at_most = TYPO_MIN_RATIO * (len(a) + len(b)) / 2
    if shorter < ratio_at_most and abs(len(a) - len(b)) > 2:
        return False  # (the same bound, from the lengths alone)
    shared = sum((Counter(a) & Counter(b)).values())
    if shared < ratio_at_most and shared < max(len(a), len(b)) - 2:
        return False
    if SequenceMatcher(None, a, b).ratio() >= TYPO_MIN_RATIO:
        return True
    if shorter < TRANSPOSE_MIN_LENGTH:
        return False
    if shorter < ANY_SLIP_MIN_LENGTH:
        # two neighbouring letters swapped, or one vowel written for another ("devided"): not a
        # consonant slip, which often makes another word ("assured", "assumed")
        if len(a) != len(b):
            return False
        if sorted(a) == sorted(b):
            return _edits(a, b, 1) <= 1
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        return len(diff) == 1 and diff[0][0] in VOWELS and diff[0][1] in VOWELS
    edits = _edits(a, b, 2)
    return edits <= 1 if shorter < TWO_EDITS_MIN_LENGTH else edits <= 2


def _edits(a: str, b: str, limit: int) -> int:
    """Edit distance with adjacent swaps as one edit (optimal string alignment), or ``limit +
    1`` when it is above ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if (
                before is not None
                and i > 1
                and j > 1
                and a[i - 1] == b[j - 2]
                and a[i - 2] == b[j - 1]
            ):
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


@dataclass(frozen=True)
class Token:
    word: str  # lower-case word or canonical token
    stem: str  # what matching compares
    canonical: bool  # a notation or phrase token (d_model, num_heads): matched exactly, no typos
    # what the word is, looked up once per token (a token is made once per word and read in
    # every phrasing's search: as properties, these were a tenth of the reading's time)
    is_filler: bool = field(init=False, repr=False, compare=False)
    is_negator: bool = field(init=False, repr=False, compare=False)
    is_hard_break: bool = field(init=False, repr=False, compare=False)
    is_break: bool = field(init=False, repr=False, compare=False)  # ends a clause

    def __post_init__(self) -> None:
        word = self.word
        object.__setattr__(self, "is_filler", word in FILLERS)
        object.__setattr__(self, "is_negator", word in NEGATORS)
        object.__setattr__(self, "is_hard_break", word in HARD_BREAKS)
        object.__setattr__(self, "is_break", word in CLAUSE_BREAKS)


@dataclass(frozen=True)
class Sentence:
    tokens: tuple[Token, ...]
    question: bool  # ends with "?": a question asked back (often the prompt pasted) asserts nothing


# Plurals the Snowball stemmer does not fold into their singular ("matrices" is "matric",
# "matrix" is "matrix"): one stem for both, in answers and phrasings alike
IRREGULAR = {"matrices": "matrix", "indices": "index", "vertices": "vertex"}


@cache
def stem(word: str) -> str:
    if not word.isalpha():
        return word  # notation (d_model, 256, wq) is compared as written
    return _STEMMER.stemWord(IRREGULAR.get(word, word))


# Words of the stance cues (stance.py, cues.py), which are matched as written: a slip in one
# ("othewise", "becuase", "definately") is read as the word. Only words no common word is a slip
# of ("though" is left out: "through" is one slip from it).
CUE_WORDS = frozenset(
    """otherwise although however whereas therefore because believe believed believes believing
    apparently probably definitely actually contrary misconception misconceptions supposedly
    nonsense disagree instead unless""".split()
)
_CUE_SPELT: dict[str, str] = {}
_LONG_WORD = re.compile(r"\b[a-z]{6,}\b", re.IGNORECASE)


def _cue_spelling(match: re.Match[str]) -> str:
    word = match.group(0)
    lower = word.lower()
    found = _CUE_SPELT.get(lower)
    if found is None:
        found = lower
        if lower not in CUE_WORDS:
            found = next((c for c in sorted(CUE_WORDS) if small_typo(lower, c)), lower)
        _CUE_SPELT[lower] = found
    return word if found == lower else found


# a part of the width given in numbers ("over only 4 of the 16 dimensions", "16 out of 64
# features"): a fraction of the features, as "d_model/num_heads" is
_PART_OF_WIDTH = re.compile(
    r"\b(\d+) (?:out )?of (?:all )?(?:the |its |their )?(\d+) (dimensions?|features?)\b",
    re.IGNORECASE,
)


def _part_of_width(match: re.Match[str]) -> str:
    part, whole, unit = match.groups()
    if not 0 < int(part) < int(whole):
        return match.group(0)
    return f"{part} {unit} (a fraction of the features)"


# a head's width in numbers beside the layer's: "with 4 heads on d_model = 8, each works on
# d_head = 4 dimensions" names d_head with a width that is not d_model / num_heads for any head
# count the text gives: the number is the student's, the name d_head not earned (it reads "a
# width of 4")
_D_MODEL_IS = re.compile(r"\bd_model\s*(?:=|is|of)\s*(\d+)\b", re.IGNORECASE)
_HEADS_ARE = re.compile(r"\b(\d+)\s+heads?\b|\bnum_heads\s*(?:=|is|of)\s*(\d+)\b", re.IGNORECASE)
_D_HEAD_IS = re.compile(r"\bd_head\s*(?:=|is|of)\s*(\d+)\b", re.IGNORECASE)


def _wrong_head_width(text: str) -> str:
    models = {int(m) for m in _D_MODEL_IS.findall(text)}
    heads = {int(a or b) for a, b in _HEADS_ARE.findall(text)} - {0}
    if len(models) != 1 or not heads or not _D_HEAD_IS.search(text):
        return text
    (d_model,) = models

    def reading(match: re.Match[str]) -> str:
        width = int(match.group(1))
        if any(width * h == d_model for h in heads):
            return match.group(0)
        return f"a width of {width}"

    return _D_HEAD_IS.sub(reading, text)


# Most rewrites are for notation an answer seldom holds ("\mathrm", "w/o", "indep."), yet each
# is a pass of the regular expression engine over the whole answer: 110 passes were most of the
# cost of reading one. What a pattern's every match must hold (strings read off its syntax tree
# below) lets ``rewrite`` pass over the patterns whose text is absent, with plain substring
# tests. Only on ASCII text: under IGNORECASE a few other letters match ASCII ones (the Kelvin
# sign matches "k", the long s "s"), which a lower-case test would not see.
_Need = tuple[str, ...]  # one of these lower-case strings
_MAX_CHOICES = 16  # strings in a need: one of more tells too little to be tested


def _needs(items: Iterable[tuple]) -> list[_Need]:
    """What every match of a parsed sequence holds: each need one of a few strings, all needs
    met (an empty list: nothing known)."""
    needs: list[_Need] = []
    run = ""  # consecutive literal characters, one string
    for op, arg in [*items, (None, None)]:
        char = _lower(chr(arg)) if op is _sre.LITERAL else None
        if char is not None:
            run += char
            continue
        if run:
            needs.append((run,))
            run = ""
        if op is not None and op is not _sre.LITERAL:
            needs += _needs_item(op, arg)
    return [need for need in needs if len(need) <= _MAX_CHOICES]


def _lower(char: str) -> str | None:
    """What a pattern's character matches, in lower-case ASCII text: itself in lower case, or
    None for the few other characters that match ASCII letters (the Kelvin sign, dotless i,
    long s)."""
    low = char.lower()
    return low if char.isascii() or not (low.isascii() or low in "ıſ") else None


def _needs_item(op: object, arg: object) -> list[_Need]:
    if op is _sre.IN:  # a class of characters: one of them (a few letters or signs only)
        chars: set[str] = set()
        for kind, value in arg:
            if kind is _sre.LITERAL:
                codes = [value]
            elif kind is _sre.RANGE and value[1] - value[0] < _MAX_CHOICES:
                codes = list(range(value[0], value[1] + 1))
            else:  # a negated class, \w, \s, a wide range: anything
                return []
            lowered = [_lower(chr(c)) for c in codes]
            if None in lowered:
                return []
            chars.update(c for c in lowered if c is not None)
        return [tuple(sorted(chars))]
    if op is _sre.SUBPATTERN:  # a group, (?-i:...) included: its content
        return _needs(arg[-1])
    if op is _sre.BRANCH:  # alternatives: the most telling need of each, one of them
        each = [_most_telling(_needs(branch)) for branch in arg[1]]
        if any(need is None for need in each):
            return []
        return [tuple(sorted({s for need in each if need is not None for s in need}))]
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT) and arg[0] >= 1:
        return _needs(arg[2])  # repeated at least once: what one repeat needs
    if op is _sre.ASSERT:  # a look-ahead or look-behind: its text is in the string too
        return _needs(arg[1])
    return []  # optional parts, \b, a negative look-around, a back-reference: nothing


def _most_telling(needs: list[_Need]) -> _Need | None:
    """The need with the longest strings (then the fewest)."""
    return max(needs, key=lambda n: (min(map(len, n)), -len(n)), default=None)


def _may_match(needs: list[_Need], lower: str) -> bool:
    holds = lower.__contains__  # (map over it: a third of the cost of a generator's loop)
    return all(any(map(holds, need)) for need in needs)


_REWRITE_NEEDS = [_needs(_sre_parse.parse(p.pattern, p.flags)) for p, _ in _REWRITES]


# the layer's width in the numbers of a student's own layer: "at d_model = 512, ... 4 x 512 x
# 512 ... the 512 projected columns" names d_model each time (at d_model = 8 the module's doubled
# count, 512, is a count); a quotient by a head count the text gives, "64-dim slices (512/8)
# with 8 heads", is d_model / num_heads
_QUOTIENT = re.compile(r"(?<![\w.])(\d+)\s*/\s*(\d+)(?![\w.])")
OWN_D_MODEL_FROM = 16  # a width the module's own numbers (d_model = 8, its counts) do not use


def _own_width(text: str) -> str:
    heads = {int(a or b) for a, b in _HEADS_ARE.findall(text)} - {0}

    def quotient(match: re.Match[str]) -> str:
        width, count = int(match.group(1)), int(match.group(2))
        if count in heads and width % count == 0 and width // count >= 2:
            return f"d_model / {count}"
        return match.group(0)

    if heads:
        text = _QUOTIENT.sub(quotient, text)
    models = {int(m) for m in _D_MODEL_IS.findall(text)}
    if len(models) != 1 or min(models) < OWN_D_MODEL_FROM or models & heads:
        return text
    (d_model,) = models
    text = re.sub(rf"\bd_model\s*(?:=|is|of)\s*{d_model}\b", "d_model", text, flags=re.I)
    return re.sub(rf"(?<![\w.,]){d_model}(?![\w.]|,\d|\s*heads?\b)", "d_model", text)


# A chat log or a dialogue given as the answer, one speaker's line a line ("[21:20] me: ...",
# "NOVICE: ..."): only the student's own lines ("me:") are theirs, and another speaker's line
# counts only when the student's next line agrees with it ("yep, same here"); left without a
# verdict, questioned or contradicted, it is that speaker's and claims nothing. A dialogue
# between invented characters (names in capitals) is the student's own writing: every line
# stands but a question one character puts to the other, which claims nothing; what the
# dialogue settles on reads as it would in prose, and one left for later settles nothing.
_SPEAKER_LINE = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,16}\][ \t]*)?([a-z][\w'-]{0,19})[ \t]*:[ \t]+(\S[^\n]*?)[ \t]*$", re.I
)
_ME = frozenset("me i myself".split())
_NOT_SPEAKERS = frozenset(
    """sure expected actual claim proof proposition lemma remark conjecture corollary theorem
    definition note notes answer question q a tldr true false edit update result results
    prediction status verdict summary reason why finding findings evidence mark marks step fix
    cause breaking rumour rumor opinion confirmed developing exclusive explainer unverified
    correction hint example eg ie ps nb""".split()
)
_AGREED = re.compile(
    r"^(?:(?:yep|yes|yeah|yup|exactly|agreed|true|correct|indeed|precisely|same here)\b"
    r"|(?:that'?s|that is|which is|this is) (?:right|correct|true|"
    r"what i (?:got|found|saw|measured))"
    r"|i (?:agree|got the same|found the same|saw the same|got that too))",
    re.I,
)


def _dialogue(text: str) -> str:
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return text
    said = [_SPEAKER_LINE.match(line) for line in lines]
    if not all(said):
        return text
    speakers = [m.group(1).lower() for m in said]
    mine = bool(set(speakers) & _ME)
    invented = all(m.group(1).isupper() and len(m.group(1)) >= 3 for m in said)
    if len(set(speakers)) < 2 or set(speakers) & _NOT_SPEAKERS or not (mine or invented):
        return text
    kept = []
    for k, m in enumerate(said):
        if mine and speakers[k] not in _ME:
            reply = next((j for j in range(k + 1, len(said)) if speakers[j] != speakers[k]), None)
            if (
                reply is None
                or speakers[reply] not in _ME
                or not _AGREED.match(said[reply].group(2))
            ):
                continue
        line = m.group(2)
        if invented and not mine and line.endswith("?"):
            continue  # a character's question to the other claims nothing
        kept.append(line if line[-1] in ".!?" else line + ".")
    return "\n\n".join(kept)


@lru_cache(maxsize=4096)  # an answer is rewritten for reading, counting and the keyword check
def rewrite(text: str) -> str:
    text = _LONG_WORD.sub(_cue_spelling, text)
    if ":" in text:  # (a chat log or a dialogue: its speakers' lines)
        text = _dialogue(text)
    lower = text.lower() if text.isascii() else None
    for (pattern, replacement), needs in zip(_REWRITES, _REWRITE_NEEDS, strict=True):
        if lower is not None and not _may_match(needs, lower):
            continue  # (no match possible: the pass would change nothing)
        rewritten = pattern.sub(replacement, text)
        if rewritten != text:
            text = rewritten
            lower = text.lower() if text.isascii() else None
    return _own_width(_wrong_head_width(_PART_OF_WIDTH.sub(_part_of_width, text)))


# A note's "label: value" line whose value is a bare yes or no ("own matrices per head: none")
# states the label or denies it.
_NOTE_ANSWER = re.compile(r"^([^:]{3,}?)\s*:\s*(none|no|nope|never|nothing|zero|yes|yep)\W*$", re.I)


# A note's "label: value" line ("softmaxes: one per head", "weights: unchanged"): the value is
# said of the label, as if written "softmaxes, one per head" (a colon would keep them apart)
_NOTE_LINE = re.compile(r"^(?:[-*+•]\s+)?([a-z0-9_#][\w#' ]{0,40}?)\s*:\s+(?=\S)([^:]*)$", re.I)
_NOT_A_LABEL = frozenset(  # a verdict or a clause of its own ("I doubt it: ..."), not a label
    """myth false true wrong not no never claim claims say says think thinks believe answer
    misconception nonsense untrue incorrect correct right i we it that this they you he she
    doubt disagree agree reject deny question nope yes""".split()
)


def _note_answer(sentence: str) -> str:
    m = _NOTE_ANSWER.match(sentence)
    if m is None:
        line = _NOTE_LINE.match(sentence)
        if (
            line
            and len(line.group(1).split()) <= 4
            and not _NOT_A_LABEL & set(line.group(1).lower().split())
        ):
            return f"{line.group(1)}, {line.group(2)}"
        return sentence
    label, value = m.groups()
    return label if value.lower() in ("yes", "yep") else f"no {label}"


def split_sentences(text: str, rewritten: bool = False) -> list[str]:
    """The sentences of ``text`` (``rewritten``: ``rewrite`` has been applied to it already)."""
    text = text if rewritten else rewrite(text)
    return [_note_answer(s.strip()) for s in _SENTENCE_END.split(text) if s and s.strip()]


def words(text: str) -> list[str]:
    """Lower-case word tokens of a text, punctuation dropped (for counting and keyword checks)."""
    return [t for t in _TOKEN.findall(rewrite(text).lower()) if t[0].isalnum()]


class Normaliser:
    """Tokenises text, folding multi-word phrases into canonical tokens, then stems."""

    def __init__(self, phrases: Mapping[str, Iterable[str]]):
        # phrase tokens (as a tuple of lower-case words) -> canonical token; longest first
        table: dict[tuple[str, ...], str] = {}
        for canonical, variants in phrases.items():
            for variant in [canonical, *variants]:
                key = tuple(_TOKEN.findall(rewrite(variant).lower()))
                if key:
                    table[key] = canonical
        self._phrases = table
        self._canonical = frozenset(phrases)
        # the phrase lengths that start with each word, longest first: most words start none
        sizes: dict[str, set[int]] = {}
        for key in table:
            sizes.setdefault(key[0], set()).add(len(key))
        self._sizes = {w: sorted(n, reverse=True) for w, n in sizes.items()}
        # a phrase's longer words, by first letter: a slip in one ("divisble by") still folds
        self._words = frozenset(w for key in table for w in key)
        by_letter: dict[str, list[str]] = {}
        for w in sorted(self._words):
            if w.isalpha() and len(w) >= TYPO_MIN_LENGTH:
                by_letter.setdefault(w[0], []).append(w)
        self._typo_words = by_letter
        self._spelt: dict[str, str] = {}
        self._made: dict[tuple[str, bool], Token] = {}
        # a text read again (a phrasing's words, the same sentence in many answers) is folded once
        self._read = lru_cache(maxsize=4096)(self._tokens)

    def _spelling(self, word: str) -> str:
        """The phrase word ``word`` is a small slip of, else ``word`` itself."""
        found = self._spelt.get(word)
        if found is None:
            found = word
            if word not in self._words and word.isalpha() and len(word) >= TYPO_MIN_LENGTH:
                found = next(
                    (w for w in self._typo_words.get(word[0], ()) if small_typo(word, w)), word
                )
            self._spelt[word] = found
        return found

    def tokens(self, text: str, rewritten: bool = False) -> tuple[Token, ...]:
        return self._read(text if rewritten else rewrite(text))

    def _tokens(self, text: str) -> tuple[Token, ...]:
        raw = [t.lower() for t in _TOKEN.findall(text)]
        spelt = [self._spelling(w) for w in raw]  # for finding phrases only
        out: list[Token] = []
        i = 0
        while i < len(raw):
            for size in self._sizes.get(spelt[i], ()):
                if i + size > len(raw):
                    continue
                canonical = self._phrases.get(tuple(spelt[i : i + size]))
                if canonical is not None:
                    out.append(self._token(canonical, True))
                    i += size
                    break
            else:
                out.append(self._token(raw[i], False))
                i += 1
        return tuple(out)

    def _token(self, word: str, phrase: bool) -> Token:
        """One (immutable) token per word or phrase, made the first time it is read."""
        key = (word, phrase)
        token = self._made.get(key)
        if token is None:
            if phrase:
                token = Token(word, word, True)
            else:
                token = Token(word, stem(word), word in self._canonical or not word.isalpha())
            self._made[key] = token
        return token

    def sentences(self, text: str, rewritten: bool = False) -> list[Sentence]:
        out = []
        for s in split_sentences(text, rewritten):
            tokens, question = self.tokens(s, rewritten=True), s.rstrip().endswith("?")
            for i in range(0, len(tokens), MAX_SENTENCE_TOKENS):
                out.append(Sentence(tokens[i : i + MAX_SENTENCE_TOKENS], question))
        return out
