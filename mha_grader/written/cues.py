"""The words stance.py reads: word classes, and the cue phrases of each stance.

Cue phrases are regular expressions over a sentence's words as the grader tokenises them (lower
case, contractions spelled out: "it's" is "it is", "don't" is "do not", a possessive "'s" is
dropped), joined by single spaces.
"""

from __future__ import annotations

import re

# ------------------------------------------------------------------------------- word classes
AUXILIARIES = frozenset(
    """is are was were be been being am do does did has have had can could will would shall
    should may might must""".split()
)
# verbs students use in these answers (any form): with the auxiliaries, what makes a run of words
# a clause of its own
VERBS = AUXILIARIES | frozenset(
    """= get gets got give gives gave given take takes took taken make makes made see sees saw
    seen use uses used need needs needed work works worked fail fails failed split splits cut
    cuts attend attends attended look looks looked compute computes computed add adds added
    change changes changed stay stays stayed remain remains remained differ differs differed
    produce produces produced share shares shared learn learns learned learnt own owns owned
    receive receives received project projects projected apply applies applied put puts spread
    spreads go goes went gone come comes came keep keeps kept lose loses lost become becomes
    became mean means meant equal equals divide divides divided reshape reshapes reshaped
    multiply multiplies multiplied run runs ran focus focuses focused match matches matched
    collapse collapses collapsed average averages averaged serve serves served mix mixes mixed
    depend depends depended happen happens happened grow grows grew increase increases increased
    decrease decreases decreased shrink shrinks shrank double doubles doubled cost costs show
    shows showed shown print prints printed return returns returned raise raises raised complain
    complains break breaks broke handle handles handled process processes processed read reads
    hold holds held exist exists sit sits sat end ends ended point points pointed blend blends
    blended capture captures captured represent represents represented allow allows allowed
    contain contains contained reuse reuses reused slice slices sliced crash crashes crashed
    error errors errored""".split()
)
PREPOSITIONS = frozenset(
    """of to into in on by for with from at over between among across per than as about through
    onto via under within without""".split()
)
# words that open a clause with a subject of its own
SUBJECTS = frozenset("the they it we you i this these those there each every all".split())
# punctuation that ends a clause
CLAUSE_PUNCTUATION = frozenset(", ; : ( ) — – -".split())
# words that open a clause of their own
SUBORDINATORS = frozenset(
    """but while whereas although though because since so yet instead if unless otherwise else
    however""".split()
)
# words that open an embedded clause: "that number doesn't capture how many independent
# patterns a token can have" does not deny the patterns
EMBEDDED = frozenset("how what whether where why who".split())
# words that end what a cue reports or denies: the student's own voice resumes
CONTRASTS = frozenset("but however yet whereas instead although though actually".split())
SCOPE_ENDS = frozenset(": ;".split())
CONCLUSIONS = frozenset("so therefore hence thus".split())
NECESSITY = frozenset("must has have need needs should required requires necessary".split())
WH_OR_AUXILIARY = AUXILIARIES | frozenset("what where when why how which who whom whose".split())
OPENERS = frozenset("so and but well ok okay then now also".split())
YES = frozenset("yes yep yeah yup true correct right exactly indeed".split())
NO = frozenset("no nope nah".split())
CONTINUATIONS = SUBORDINATORS | frozenset("and or which that who whose as like".split())
PRONOUNS = frozenset("it they he she that this there we you i so".split())


# ---------------------------------------------------------------------------- cue patterns
BE = r"(?:is|are|was|were|be|been|s|m|am|would be|will be)"
ADV = (
    r"(?:(?:completely|totally|simply|just|plainly|clearly|obviously|of course|certainly|"
    r"absolutely|definitely|actually|really|quite|entirely|fully|wholly|utterly|so|very|all|"
    r"100 %) )*"
)
NEG_VERDICT = (
    r"(?:false|wrong|untrue|incorrect|not true|not correct|not right|not the case|not so|"
    # "Not my reading: ...", "not my view"
    r"not my (?:reading|view|opinion|take|experience|understanding|conclusion)|"
    r"a myth|myth|a lie|nonsense|rubbish|bogus|a fallacy|misleading|mistaken|a misconception|"
    r"a mistake|an error|a misunderstanding|backwards|the other way (?:round|around)|"
    r"an urban legend|a legend|not how it works)"
)
POS_VERDICT = r"(?:true|right|correct|the case|accurate|spot on)"
SAY = (
    r"(?:say|says|said|saying|claim|claims|claimed|claiming|think|thinks|thought|thinking|"
    r"believe|believes|believed|believing|argue|argues|argued|arguing|assume|assumes|assumed|"
    r"suggest|suggests|suggested|state|states|stated|insist|insists|insisted|tell|tells|told|"
    r"hold|holds|expect|expects|expected|maintain|maintains|write|writes|wrote|feel|feels|"
    r"reckon|reckons|imagine|imagines|suppose|supposes|guess|guesses|assert|asserts|assuming|"
    r"expecting|supposing|stating|insisting)"
)
PEOPLE = (
    r"(?:people|persons|students|folks|others|someone|somebody|anyone|anybody|everyone|"
    r"everybody|classmates?|friends?|colleagues?|tutors?|teachers?|team|teams|authors?|"
    r"textbooks?|books?|blogs?|posts?|sources?|critics?|sceptics?|skeptics?|engineers?|"
    r"researchers?|experts?|websites?|forums?|peers?|partners?|ta|tas|group|beginners?|"
    r"newcomers?|chatgpt|gpt|llms?)"
)
QUANT = r"(?:some|many|most|several|a lot of|lots of|plenty of|certain|other|a few|few)"
DET = r"(?:(?:the|a|an|my|our|your|his|her|their|this|that|one|some) )"
MODAL = (
    r"(?:(?:may|might|could|would|will|often|usually|sometimes|commonly|wrongly|mistakenly|"
    r"still|also|naively|incorrectly|generally|typically|probably|do|does|did|like to|love to|"
    r"tend to|seem to|used to|even|always|really|honestly|should|must|can|ought to|"
    # "nobody could seriously claim", "no one can reasonably say"
    r"seriously|reasonably|sensibly|possibly|genuinely|sincerely|truly|actually|ever) )*"
)
# "some claim", "a friend told me", "the team argues", "you might think", "they say"; and what
# other people found: "everyone in my group got 256", "my partner measured it"
FOUND = (  # in the past tense: "everyone gets the same number of slices" is no report
    r"(?:got|found|measured|saw|observed|obtained|reported|ran it|computed|counted|checked)"
)
# what others go on saying: "people like to repeat that X", "everyone keeps repeating X"
_REPEAT = r"(?:repeat|repeats|repeated|repeating|keep repeating|keeps repeating|kept repeating)"
OTHERS_SAY = re.compile(
    rf"\b(?:{QUANT} )?(?:{DET}?(?:[a-z]+ )?{PEOPLE}|{QUANT}|they|he|she) {MODAL}(?:{SAY}|{_REPEAT})"
    rf"(?: (?:me|you|us|them|him|her))?(?: that)?\b"
    rf"|\b(?:{QUANT} )?{DET}?(?:[a-z]+ )?{PEOPLE}(?: in (?:my|our|the) (?:group|class|team|lab))? "
    rf"{MODAL}{FOUND}(?: that)?\b"
)
GENERIC_SAY = re.compile(
    rf"\b(?:you|one|we) (?:might|may|could|would|will) {MODAL}{SAY}(?: that)?\b"
)
IT_IS_SAID = re.compile(
    r"\bit (?:is |s )?(?:(?:often|commonly|widely|sometimes|generally|frequently|usually) )?"
    r"(?:said|claimed|believed|thought|argued|assumed|suggested|stated|held|rumou?red)(?: that)?\b"
    # the passive with an infinitive: "head 0 is reported to split token 0 ...", "they are said
    # to attend to different things"
    r"|\b(?:is|are|was|were) (?:(?:often|commonly|widely|sometimes|generally) )?(?:said|reported|"
    r"claimed|believed|thought|supposed|rumou?red|alleged) to\b"
    # how things might look, in a modal: "while it might seem that X", "it may appear as if X",
    # "at first it could look like X" (the student's own "it seems that X", and the tentative
    # "it would seem that X", are hedges: HEDGE)
    r"|\b(?:it|this|that|one|you) (?:(?:might|may|could|can) (?:(?:at first|initially|easily|"
    r"well) )?|would (?:at first|initially|easily) |"
    r"would (?=(?:seem|appear|look|sound) (?:at first|initially)))"
    r"(?:seem|appear|look|sound)(?: (?:at first|initially))?"
    r"(?: (?:to (?:some|many|people|others|beginners|you|one))?"
    r"(?: like| as if| as though| that))?\b"
)
ACCORDING = re.compile(
    rf"\baccording to (?:{QUANT} )?(?:{DET}?(?:[a-z]+ )?{PEOPLE}|{QUANT}|popular belief|"
    rf"common belief|rumou?r|folklore|the myth)\b"
)
# the course's own material, cited for a finding: "according to the lab notebook, X", "the
# notebook shows that X" ("the module" is also torch's nn.MultiheadAttention, whose count a
# student reports as a finding of their own)
COURSE = (
    r"(?:(?:(?:lab|course|jupyter) )?(?:notebook|notebooks|lecture slides|lecture|lectures|"
    r"slides|lecture notes|course notes|readme|handout|handouts|hand outs?|worksheet|course|"
    r"reading)"
    # the module's own text: "the module's diagram shows", "the reference table lists" (not "the
    # module" alone, which is also torch's nn.MultiheadAttention)
    r"|(?:module )?(?:diagram|diagrams|reference table|reference|discussion|write up)"
    r"|module (?:text|table|page|chapter))"
)
CITED = re.compile(
    rf"\baccording to (?:the |our |my )?{COURSE}\b"
    # "the lab notebook's heatmaps apparently show": a part of it, and an adverb, may come between
    rf"|\b(?:the|our|my) {COURSE}(?: (?:heatmaps?|figures?|plots?|tables?|code|output|cells?|"
    r"example|examples|text))?(?: (?:apparently|clearly|also|supposedly|even))? "
    r"(?:say|says|said|show|shows|showed|shown|claim|claims|"
    r"claimed|state|states|stated|explains|explained|mentions|mentioned|tells us|told us|"
    r"suggests|suggested|points out|pointed out|lists|listed|describes|described|gives|gave|"
    r"has|had|puts it|draws|drew)(?: that)?\b"
    # the course's material followed: "Following the lecture notes: X", "Per the slides, X"
    # (the colon is the cue's: what it opens is the material's)
    rf"|\b(?:following|per|as per|going by|based on) (?:the |our |my )?{COURSE}(?= [,:]|$)"
    r"(?: :)?"
    # the course's staff showing it: "the TA showed 256 for both in the tutorial" (a verb of
    # saying makes a report instead: "my TA said X")
    r"|\b(?:the|our|my) (?:ta|tas|tutor|teacher|instructor|professor|prof|lecturer|teaching "
    r"assistant) (?:showed|demonstrated|showed us|demonstrated to us|worked out|derived|"
    r"went through)(?: (?:in|during) (?:the )?(?:tutorial|section|class|lecture|lab))?"
    r"(?: that)?\b"
    # what the course taught: "I was taught that X"
    r"|\b(?:i|we) (?:was|were|(?:have |ve )?been|got) taught(?: (?:in|during) (?:the )?"
    r"(?:class|lecture|lectures|course))?(?: that)?\b"
)
CONTRARY = re.compile(r"\b(?:contrary to|unlike) (?:what |the )?")
# "I expected", "I used to think", "I was told": a former or borrowed belief, not the finding
I_REPORTED = re.compile(
    r"\b(?:i|we) (?:(?:first|initially|originally|naively|wrongly) )?(?:expected|assumed|"
    r"used to (?:think|believe)|was told|were told|heard|had heard|was expecting|had expected|"
    r"(?:m|am|are|have been|been) told|(?:have )?read (?:(?:online|somewhere|elsewhere) )?that|"
    r"thought at first|first thought|initially thought|originally thought)(?: that)?\b"
    # "I thought X, but what really changes is Y": a view given up, when a contrast follows
    r"|\b(?:i|we) (?:had |have |would have |d have )?thought(?: that)?\b(?=.* (?:but|however|yet) )"
    # "I saw on StackOverflow that", "I read in a blog post that" (not "I saw in my run that")
    r"|\b(?:i|we) (?:saw|read|learned|learnt|found|picked up) (?:on|in|from) (?:a |the |some )?"
    r"(?:[a-z]+ ){0,2}?(?:stackoverflow|stack overflow|reddit|forum|blog|post|thread|video|"
    r"youtube|internet|online|discord|twitter|tiktok|article|medium|chatgpt)s?(?: post)?"
    r"(?: that)?\b"
    r"|\b(?:at first|initially|originally|before)(?: ,)? (?:i|we) (?:thought|believed|assumed|"
    r"expected|was sure|were sure|was convinced|were convinced|was certain|were certain)"
    r"(?: that)?\b"
    # a debugging story's first result, before the fix: "my parameter_counts first returned 512
    # for 2 heads, because ...", "with my first split_heads the rows did not match" (the fixed
    # result the student gives after it is theirs)
    r"|\b(?:my|our) (?:own )?(?:[a-z_]+ ){1,2}?(?:first|initially|originally|at first) "
    r"(?:returned|gave|said|printed|showed|reported|produced|output|came out)\b"
    r"|\b(?:(?:at first|initially|originally|first) (?:, )?)(?:my|our) (?:[a-z_]+ ){1,2}?"
    r"(?:returned|gave|said|printed|showed|reported|produced|output|came out)\b"
    r"|\b(?:my|our) (?:first|initial|original|buggy|broken|old|earlier) (?:[a-z_]+ ){1,2}?"
    r"(?:returned|gave|said|printed|showed|reported|produced|output|came out)\b"
    r"|\b(?:with|in|using|from) (?:my|our) (?:first|buggy|broken|old|original|earlier|initial|"
    r"unfixed) (?:version of |attempt at )?[a-z_]+\b"
)
NOUN_REPORT = re.compile(
    r"\b(?:(?:the|a|an|this|that|their|his|her)(?: team s| team)? )?(?:(?:common|popular|"
    r"widespread|frequent|usual|typical|naive|old|classic|intuitive|obvious|tempting|standard|"
    r"textbook|official|expected|conventional|accepted|received|orthodox|canonical|model) )+"
    r"(?:belief|claim|idea|notion|view|assumption|intuition|argument|opinion|rumou?r|saying|"
    r"expectation|impression|answer|reply|response|line|explanation|story|position|account)"
    r"(?: (?:is|says|goes|holds|would be|here is))?(?: that)?\b"
    # "the notes would have you believe that X": what a source would make one think
    r"|\bwould have (?:you|us|me|one|people|students|everyone) (?:believe|think|accept)"
    r"(?: that)?\b"
    # "from that we're meant to believe X", "students are supposed to think X": what someone
    # else would have one believe
    r"|\b(?:we|you|i|one|students|people)(?: (?:are|m|am|is|were|was))? (?:meant|supposed|"
    r"expected) to (?:believe|think|accept|conclude|buy)(?: that)?\b"
    r"|\b(?:the|a|this|their|his|her) (?:team )?(?:claim|belief|argument|notion|assumption|"
    r"rumou?r|idea|view)(?: is)? that\b"
)
NOUN_DENY = re.compile(
    r"\b(?:(?:a|an|the|this|that|one) )?(?:(?:common|popular|widespread|frequent|usual|typical|"
    r"naive|old|classic|persistent|big|great|famous|well known|known|total|complete) )*"
    r"(?:myth|misconception|misunderstanding|fallacy|urban legend|fairy tale|old wives tale)"
    r"(?: (?:is|says|goes|holds|claims|has it|would have it|would say|would be))?(?: that)?\b"
)
# "a common mistake is to think X", "the classic trap is believing that X"
MISTAKE_IS = re.compile(
    r"\b(?:a|an|the|one|another) (?:(?:common|classic|typical|frequent|big|usual|easy|"
    r"beginner|tempting|popular|widespread) )*(?:mistake|error|trap|pitfall|misconception|"
    r"misunderstanding|fallacy|confusion) (?:is|would be|here is|people make is) (?:to )?"
    rf"(?:{SAY}|picture|imagine|envision|envisage)(?: that)?\b"
)
FALSE_THAT = re.compile(
    rf"(?:^|(?<=[,;:(]) |\b(?:but|and|so) )(?:it|this|that) {BE}? ?{ADV}{NEG_VERDICT}"
    rf"(?: to {SAY})?(?: that)\b"
    # a note's "Not true that ...", "False that ..." opening a statement
    rf"|(?:^|(?<=[;:(]) ){ADV}{NEG_VERDICT} that\b"
    # what the point is not: "it's not that the heads share a budget", "it's not about losing
    # parameters", "it is not as if torch hid weights"
    rf"|(?:^|(?<=[,;:(]) |\b(?:but|and|so) )(?:it|this|that) {BE} ?{ADV}(?:not|never) "
    rf"{ADV}(?:that|about|as if|as though)\b"
)
# a verdict of falsehood denied: "it's not untrue that X", "it is not wrong to say X", "that's
# not a myth: X" asserts X (two negations, one claim)
TRUE_THAT = re.compile(
    rf"(?:^|(?<=[,;:(]) |\b(?:but|and|so) )(?:it|this|that) {BE} (?:not|never) {ADV}{NEG_VERDICT}"
    rf"(?: to {SAY})?(?: that| :)\b"
)
# "can't be anything but the same", "is nothing but a reshape": the negation and its exception
# are one word, "only" (what follows is asserted)
NOTHING_BUT = re.compile(
    r"\b(?:(?:not|never)(?: [a-z]+){0,2}? (?:anything|any other thing)|nothing) (?:but|other than|"
    r"except|else than|else but)\b"
)
WRONG_TO_SAY = re.compile(
    rf"\b(?:wrong|false|incorrect|misleading|naive|silly|nonsense|mistaken|"
    # "a mistake to think", "a common mistake to think", "an easy error to make ... to say"
    rf"(?:a|an) (?:(?:common|classic|typical|frequent|big|usual|easy|beginner|tempting|popular|"
    rf"widespread|huge|serious|basic) )*(?:mistake|error|trap|misconception|fallacy)|"
    # "it is absurd to think", "you'd have to be confused to believe", "only a fool ... to say"
    rf"absurd|ridiculous|laughable|crazy|mad|insane|foolish|confused|stupid|dumb|a joke|"
    rf"madness|a fool|an idiot|delusional|lazy|sloppy) to {SAY}(?: that)?\b"
    # "only someone who skipped the lab would think", "only a beginner would claim"
    rf"|\bonly {DET}?(?:[a-z]+ )?(?:{PEOPLE}|fools?|idiots?|amateurs?|novices?)"
    rf"(?: (?:who|that)(?: [a-z']+){{1,6}}?)? {MODAL}{SAY}(?: that)?\b"
    # "there is no way that X": X denied (not "no way to split 8 into 3")
    r"|\bthere (?:is|s|was) (?:absolutely |simply |just )?no way(?: that)?\b(?! to\b)"
)
IGNORE = re.compile(
    rf"\b(?:ignore|disregard|dismiss|forget about|forget|(?:do|did|should|must) not "
    rf"(?:listen to|believe|trust)|never (?:listen to|believe|trust)) (?:anyone|anybody|people|"
    rf"those|whoever|everyone|everybody|someone|somebody|the people|the claim|the idea|the notion|"
    rf"the myth|claims|{QUANT} people|what (?:people|{QUANT}|they|others) {SAY})"
    rf"(?: (?:who|that))?(?: {MODAL}{SAY})?(?: (?:you|me|us))?(?: that)?\b"
)
NOBODY = re.compile(
    rf"\b(?:nobody|no one|none of us|not a single (?:person|one|student|soul)|no (?:sane|serious|"
    rf"sensible|reasonable|competent|thinking|informed|careful|honest) (?:person|one|student|"
    rf"engineer|researcher|reader|people)) {MODAL}{SAY}(?: that)?\b"
)
I_DENY = re.compile(
    rf"\b(?:i|we) (?:(?:do|did|can|could|would|will) not|never|no longer|m not|am not) "
    rf"{ADV}(?:believe|believed|think|thought|buy|bought|accept|accepted|agree|agreed|trust|"
    rf"trusted|go along with)(?: (?:with|in))?(?: (?:that|it|this|the claim|the idea))?"
    rf"(?: that)?\b"
    rf"|\b(?:i|we) (?:m|am|are) not {ADV}(?:convinced|sure) (?:that)\b"
    # what the student would not write or say: "I would never claim that X", "what I would NOT
    # write: that X, that Y", "things I won't say: X" (the colon is the cue's: its list is denied)
    rf"|\b(?:(?:what|things?|ideas?|claims?|statements?|points?|sentences?) (?:that )?)?(?:i|we) "
    rf"(?:(?:would|will|do|did|should|shall|wo) not|never|(?:would|will) never) {ADV}"
    rf"(?:say|write|claim|argue|state|put|suggest|answer|assert|conclude)"
    rf"(?: (?:here|in (?:my|an|the) answer))?(?: (?:is|are))?(?: that| :(?: that)?)?(?= |$)"
    # "I am not saying X", "we're not claiming that X"
    rf"|\b(?:i|we) (?:m|am|are|was|were) not {ADV}(?:saying|claiming|arguing|suggesting|"
    rf"writing|stating|asserting)(?: that)?\b"
)
I_DOUBT = re.compile(
    r"\b(?:i|we) (?:(?:strongly|really|seriously|honestly) )?(?:doubt|question|dispute|reject|deny|"
    r"disagree with|disagree that|m not convinced|am not convinced|m sceptical|am sceptical|"
    r"m skeptical|am skeptical|m doubtful|am doubtful|find it hard to believe|refuse to believe|"
    r"refuse to accept|refuse to buy)"
    r"(?: (?:that|whether|if|the claim that|the idea that))?\b"
)
HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|presumably|apparently|seemingly|"
    r"(?:more |most )?likely|"
    r"i (?:think|believe|guess|suppose|reckon|suspect|feel|say|would say|assume|gather|"
    r"understand|imagine)(?: that)?|it seems(?: like| that| to me)?|seems like|seems to|"
    r"it would (?:seem|appear)(?! at first| initially)(?: that| as if| as though)?|"
    r"it looks like|looks like|as far as i (?:can tell|know|understand|see|remember)|"
    r"if i (?:am|m) not mistaken|(?:i (?:am|m) )?not sure$|if i (?:am|m) right|"
    r"if i (?:understand|understood|remember|recall|counted|computed|read|did|got|measured)"
    r"(?: (?:it|this|that|everything|things))?(?: (?:correctly|right|well))?|"
    # odds short of certain on what follows: "90% sure: X", "80 % confident that X"
    r"(?:i (?:am|m) )?[1-9][0-9]? mod (?:sure|certain|confident)(?: that)?|"
    # a proviso on the student's memory or knowledge: "if memory serves", "unless I'm mistaken",
    # "to the best of my knowledge", "it looks to me like", "I'd wager" (the "'d" goes)
    r"if (?:my )?memory serves(?: (?:me|right|correctly|well))*|"
    r"unless (?:i|we) (?:am |m |are )?(?:mistaken|wrong|missing something|misremember)|"
    r"to the best of (?:my|our) (?:knowledge|recollection|understanding|memory)|"
    r"(?:it )?looks to me (?:like|as if|as though|that)|"
    r"i (?:would )?(?:wager|venture|daresay|dare say)(?: that)?|"
    # the student naming themself in the third person: "the student believes X" is "I believe X"
    r"(?:the|this) (?:student|candidate|writer|undersigned) (?:thinks|believes|reckons|suspects|"
    r"guesses|feels|assumes|supposes)(?: that)?|"
    r"(?:i (?:am|m) )?not (?:100(?: mod)?|entirely|totally|completely|fully|quite|really) sure"
    r"(?: but)?|(?:i (?:am|m) )?not sure but|i (?:am|m) "
    r"(?:fairly|pretty|quite|almost) sure(?: that)?|i (?:am|m) not sure (?:why|what|how)\b.*)\b"
)
# the student's odds on a claim: "20% on X", "a 30% chance that X", "70/30 that X" put X at the
# odds given: below even, X is the unlikelier side and not the student's answer (read like
# someone else's), at even or above it is a guess (a hedge); "the 30 is Y" names what the
# smaller share of a split is on
ODDS = re.compile(r"\b(?P<n>[0-9]{1,2}) mod (?:on|for|chance (?:that|of)|odds (?:on|that))(?= )")
ODDS_SPLIT = re.compile(r"^(?P<a>[0-9]{1,2}) / (?P<b>[0-9]{1,2})(?: (?:that|on|for))?(?= )")
ODDS_SHARE = r"\bthe {}(?: mod)? (?:is|being|goes to|on|for)(?= )"
# "maybe the count is the same, maybe not", "..., or not": a claim the student leaves open,
# neither made nor denied (not "whether or not")
UNDECIDED = re.compile(
    r"(?:(?<!whether )\bor(?: (?:maybe|perhaps|possibly))?|[,;] (?:maybe|perhaps|possibly)) "
    r"not(?= [:;,]|$)"
)
# "I wonder whether X", "not sure if X", "it's unclear whether X": a question left open, so X is
# neither claimed nor denied ("I'm not sure, but X" is a hedge: HEDGE)
OPEN_QUESTION = re.compile(
    r"\b(?:(?:i|we) (?:(?:really )?wonder|(?:am|m|are) (?:not (?:sure|certain)|unsure)|"
    r"(?:do|can) not (?:know|tell|say)|have no idea|(?:have )?never (?:figured out|understood))"
    r"|not sure|unsure|no idea|who knows|hard to (?:say|tell)|"
    r"(?:it (?:is |s )?)?(?:unclear|not clear|debatable|an open question|doubtful)(?: to me)?)"
    r" (?:if|whether)\b"
)
# a question fronted and then left open: "Whether each head takes an equal piece or all of it,
# I'm not sure.", "Whether that holds for other seeds: unclear." (what "whether" asks is neither
# claimed nor denied; the tail is the cue)
FRONTED_OPEN = re.compile(
    r"^(?:(?:and|but|so|as for|now) )?whether\b.*? [,;:] (?P<tail>(?:(?:i|we) (?:am |m |are )?"
    r"(?:not (?:sure|certain)|unsure|do not know|did not check|have no idea|can not (?:say|tell)|"
    r"could not (?:say|tell))|(?:(?:that|this|it) )?(?:is |s )?(?:unclear|not clear|hard to (?:say|"
    r"tell)|an open question|beyond me)|no idea|who knows|not sure|unsure|dunno|idk)"
    r"(?: (?:yet|either|to me|though|honestly))?)$"
)
# an answer named, not given: "my experiment showed what different heads produce for the same
# token", "the heatmap tells you whether they agree": what the embedded question asks is neither
# claimed nor denied (a colon after it opens the answer: "showed which tokens: head 0 ..."; "the
# count doesn't show what is lost" says something of it)
NAMED_ANSWER = re.compile(
    r"(?<!not )(?<!never )\b(?:show|shows|showed|shown|tell|tells|told|reveal|reveals|revealed|"
    r"answer|answers|answered) (?:(?:us|me|you) )?(?:what|whether|which)\b"
)
# a whole sentence that judges the previous one
VERDICT_SUBJECT = (
    r"(?:(?:but|and|so|well|yeah|honestly|frankly|of course|actually)(?: [,;])? )*"
    r"(?:(?:that|this|it|which|"
    r"all of (?:this|that|it)|all (?:this|that)|this claim|that claim|the claim|this idea|"
    r"that idea|the idea|this view|that view|both|both claims|they|these people|those people|"
    r"such claims|this belief|that belief|that statement|this statement|the team|the myth) )?"
)
# doubt as a verdict: "Seems too convenient to me", "That sounds fishy"
_SUSPECT = (
    r"(?:(?:(?:but|and|well|honestly) )?(?:(?:it|that|this) (?:is |s )?)?(?:seems|sounds|looks) "
    r"(?:(?:a bit|a little|way|much|rather|far) )?(?:too (?:convenient|good to be true|neat|easy|"
    r"simple|clean)|fishy|suspicious|dubious|unlikely|off)(?: to me)?"
    # "Very convenient.", "How convenient.": the same doubt, put as mock approval
    r"|(?:(?:but|and|well|honestly) )?(?:(?:it|that|this) (?:is |s )?)?(?:very|how|awfully|"
    r"suspiciously|rather|quite|so) (?:convenient|neat|tidy)(?: for (?:them|the (?:module|notes|"
    r"slides|ta|textbook)))?)"
)
NEG_SENTENCE = re.compile(
    rf"^{_SUSPECT}(?: (?:though|honestly))?$"
    rf"|^{VERDICT_SUBJECT}(?:{BE} )?{ADV}{NEG_VERDICT}(?: (?:though|of course|obviously|anyway|"
    rf"either|at all|in fact|here|there))?$"
    rf"|^(?:(?:but|and) )?(?:i|we) (?:(?:do|did|can|could|would|will) not|never|no longer) {ADV}"
    rf"(?:believe|believed|buy|bought|accept|accepted|agree|agreed|trust|trusted|think so|"
    rf"thought so|share|shared|hold|held|endorse|endorsed|subscribe to|subscribed to|"
    rf"agree with|go along with)(?: (?:it|that|this|them|that view|this view|the view|"
    rf"that idea|this idea|the idea|that claim|this claim|the claim|"
    rf"any of (?:it|this|that)|a word of (?:it|this|that)|"
    rf"for a (?:second|minute|moment)|at all|either|anymore|any more|one bit))*$"
    rf"|^(?:(?:but|and) )?(?:i|we) (?:(?:strongly|really|seriously) )?(?:doubt|disagree|reject|"
    rf"dispute|deny)(?: (?:it|that|this|them|with (?:it|that|this|them)|strongly|completely))*$"
    rf"|^(?:(?:but|and) )?(?:they|these people|those people|the team) (?:are |were )?{ADV}"
    rf"(?:wrong|mistaken)$"
    # the student's disbelief as a whole sentence: "I'm not (fully) convinced.", "Not persuaded.",
    # "I'm sceptical.", "I have my doubts."
    rf"|^(?:(?:but|and|well|honestly|still) )?(?:(?:i|we) (?:(?:m|am|are) )?)?not {ADV}"
    rf"(?:convinced|persuaded|sold)(?: (?:though|at all|yet|by (?:it|that|this|them)))?$"
    rf"|^(?:(?:but|and|well|honestly|still) )?(?:i|we) (?:m|am|are) {ADV}(?:sceptical|skeptical|"
    rf"doubtful)(?: (?:though|about (?:it|that|this)))?$"
    rf"|^(?:(?:but|and|well|honestly|still) )?(?:i|we) (?:have|ve got) (?:my|our|some|serious) "
    rf"doubts(?: (?:though|about (?:it|that|this)))?$"
)
# "Sounds right to me", "seems correct": how it strikes the student, a verdict all the same
_STRIKES = rf"(?:{BE} |(?:sounds|seems|looks) )?{ADV}{POS_VERDICT}(?: to (?:me|us))?"
POS_SENTENCE = re.compile(
    rf"^{VERDICT_SUBJECT}{_STRIKES}$"
    r"|^(?:(?:and|but) )?(?:i|we) (?:(?:fully|totally|completely) )?(?:agree|believe it|buy it)$"
    r"|^(?:(?:and|but) )?(?:they|these people|those people) (?:are |were )?(?:right|correct)$"
)
# "It's false: ..." / "That is wrong, ..." opening a sentence: judges the previous one
# ... and the student's disbelief opening one: "I'm not convinced, ...", "I don't buy it: ...",
# "Seems too convenient to me, ..." (what follows is the student's own: "..., I'd expect the
# same pattern")
NEG_OPENING = re.compile(
    rf"^{VERDICT_SUBJECT}(?:{BE} )?{ADV}{NEG_VERDICT} [:;,(—–-] "
    rf"|^{_SUSPECT} [:;,(—–-] "
    rf"|^(?:(?:but|and|well|honestly) )?(?:i|we) (?:(?:m|am|are) )?not {ADV}(?:convinced|persuaded|"
    rf"buying it|buying that)(?: (?:though|at all|by (?:it|that|this)))? [:;,(—–-] "
    rf"|^(?:(?:but|and|well|honestly) )?(?:i|we) (?:do not|did not|can not|could not|never|"
    rf"no longer) {ADV}(?:buy|believe|accept|trust|share|hold|endorse|subscribe to|agree with|"
    rf"go along with) (?:it|that|this|that view|this view|the view|that idea|this idea|the idea|"
    rf"that claim|this claim|the claim|that reading|them)(?: (?:though|at all|either))? [:;,(—–-] "
)
POS_OPENING = re.compile(rf"^{VERDICT_SUBJECT}{_STRIKES} [:;,(—–-] ")
# the student making the sentence before theirs by checking it or weighing it, however the
# sentence goes on: "I reproduced this by listing the parameters: ...", "I find this convincing
# and it is consistent with my own shapes", and a bare "Confirmed." (a referee's, a reporter's)
ENDORSE_OPENING = re.compile(
    r"^(?:(?:and|but|so|having checked|indeed) )?(?:i|we) (?:(?:have|also|then|later|"
    r"independently|since) )*(?:reproduced|replicated|confirmed|verified|checked) (?:this|that|it|"
    r"them|the (?:claim|result|finding|numbers)|their (?:claim|result|finding|numbers))\b"
    r"|^(?:(?:and|but|so) )?(?:i|we) find (?:this|that|it|them|(?:their|the|this|that) (?:claim|"
    r"argument|point|reasoning|result)) (?:(?:very|quite|entirely|fully|wholly) )?(?:convincing|"
    r"persuasive|compelling|sound|correct|right)\b"
    r"|^(?:confirmed|verified|reproduced|replicated)(?: (?:by me|by us|in my run|independently))?$"
)
# where a judgement of what came before ends: the sentence, or a colon or semicolon
CLOSES = r"(?= [:;]|$)"
# "..., which is false" / "— not true" / ", but I don't believe it": judges the clauses before
NEG_TAIL = re.compile(
    rf" (?:[,;:(—–-]|but|and)(?: (?:which|that|this|it|but that|but this|and that|and this|"
    rf"but it|both))? (?:{BE} )?{ADV}{NEG_VERDICT}{CLOSES}"
    rf"| (?:[,;:(—–-]|but|and) (?:i|we) (?:(?:do|did|can|could|would|will) not|never) {ADV}"
    rf"(?:believe|believed|buy|bought|accept|agree|think so|trust)(?: (?:it|that|this|them))?"
    rf"{CLOSES}"
)
POS_TAIL = re.compile(
    rf" (?:[,;:(—–-]|but|and)(?: (?:which|that|this|it|and that|and this|they|and they))? "
    rf"(?:{BE} )?{ADV}{POS_VERDICT}{CLOSES}"
)
# ", some say" / ", or so they say": reports the clauses before
REPORT_TAIL = re.compile(
    rf" (?:[,;(—–-]|or so) (?:{QUANT} )?(?:{DET}?{PEOPLE}|{QUANT}|they) {MODAL}{SAY}$"
    rf"| ,? ?or so (?:[a-z_]+ ){{1,3}}{SAY}$"
)
# the student declining to vouch for what came before: "I can't confirm it.", "..., so I haven't
# verified that", "I'd want to see it on more seeds before believing it", "not until I check it
# myself": neither claimed nor denied (a report), whatever clauses come first in the sentence
_VOUCH = (
    r"(?:confirm|confirmed|verify|verified|check|checked|vouch for|back up|reproduce|reproduced|"
    r"test|tested|assess|assessed|judge|evaluate|evaluated|rerun|re run|reran|replicate|"
    r"replicated)"
)
NO_VOUCH = re.compile(
    r"(?:^|(?<=[,;:]) |\b(?:but|and|so|yet|though|although) )(?:(?:but|and|so|yet) )?"
    # (a reporter's or a reviewer's "I": "though this reporter could not confirm")
    r"(?:i|we|(?:this|the) (?:reporter|writer|reviewer|referee|correspondent|author)) "
    r"(?:can not|could not|have not|had not|did not|do not|never|still have not|have never|"
    r"was not able to|were not able to|am not able to|m not able to|(?:have )?not yet)"
    r"(?: (?:really|actually|personally|yet|been able to|managed to|had time to|got to))* "
    rf"{_VOUCH} (?:it|that|this|them|any of (?:it|this|that)"
    r"|the claim|their claim|those numbers|the numbers)(?: (?:myself|ourselves|yet|though|"
    r"either|for myself))*(?= [,;:]|$| and )"
    # with no object, closing its clause: "though this reporter could not confirm"
    rf"|\b(?:i|we|(?:this|the) (?:reporter|writer|reviewer|referee|correspondent)) (?:can not|"
    rf"could not|have not|had not|did not|was not able to|were not able to) {_VOUCH}"
    r"(?: (?:myself|ourselves|yet|independently))?(?= [,;:]|$)"
    # a sentence saying what came before is unverified: "Unverified at press time."
    r"|^(?:(?:but|and|yet|still|as yet|all) )?(?:unverified|unconfirmed|not (?:yet )?(?:verified|"
    r"confirmed|checked))(?: (?:at|as of|so far|for now|yet|by me|by us)(?: [a-z]+){0,3})?$"
    # "I don't know enough to say if that's true", "I can't tell whether she's right"
    r"|\b(?:i|we) (?:do not|did not|can not|could not) (?:really )?(?:know|tell|say|judge)"
    r"(?: enough to (?:say|tell|judge))? (?:if|whether) (?:[a-z]+ ){1,3}?"
    r"(?:(?:is|s|are|was|were) )?(?:true|right|correct|so)$"
    r"|\b(?:i|we) (?:would|d|will|should)? ?(?:want|need|have) to (?:see|check|verify|confirm|"
    r"reproduce|test) (?:it|that|this|them)(?: [a-z0-9_]+){0,6}? before (?:i |we )?(?:(?:believing|"
    r"believe|accepting|accept|buying|buy|trusting|trust) (?:it|that|this|them)"
    # "... before I take a chatbot's word for it"
    r"|(?:take|taking) (?:[a-z]+ ){0,3}?word for (?:it|that|this))$"
    # "..., so I couldn't say.", "I can't really tell.": the student does not know (not "I would
    # not say that X", a denial)
    r"|\b(?:i|we) (?:could not|can not) (?:really |honestly )?(?:say|tell)(?: (?:for sure|either "
    r"way|yet))?$"
    # the student refusing to stand behind it: "so I'm not putting my name to that", "I won't
    # sign off on it", "I wouldn't take its word for it"
    r"|\b(?:i|we) (?:m not|am not|are not|will not|would not|do not|can not|could not|never|"
    r"refuse to)(?: (?:really|actually|personally|going to))? (?:(?:put|putting) (?:my|our) "
    r"names? (?:to|on|behind)|(?:sign|signing) off on|(?:take|taking) (?:[a-z]+ ){0,3}?word for"
    r"|(?:stand|standing) behind|(?:vouch|vouching) for) (?:it|that|this|them)"
    r"(?: (?:though|either|yet))?$"
    # a doubt that what came before matters: "not convinced that changes anything", "I doubt it
    # makes any difference", "I don't see why that would matter"
    r"|(?:^|\b(?:but|and|so|yet) )(?:(?:i|we) (?:m |am |are )?)?(?:not (?:really |entirely )?"
    r"(?:convinced|sure|persuaded)|doubt|(?:do not|can not) see (?:how|why)) (?:that|it|this)"
    r"(?: really)? (?:changes?|matters?|makes? (?:a|any) difference|means? anything|would "
    r"(?:change|matter|make (?:a|any) difference))\b"
    # what came before said to be unproven: "Whether this holds beyond one seed has not been
    # established.", "That hasn't been verified."
    r"|^(?:(?:but|and|yet|still) )?(?:whether (?:[a-z0-9_]+ ){1,10}?|(?:this|that|it|none of "
    r"(?:this|that|it)) )(?:has|have|is|was|had) not (?:yet )?(?:been )?(?:established|shown|"
    r"verified|confirmed|demonstrated|tested|checked|proven|proved)(?: (?:yet|either))?$"
)
# sarcasm opening a sentence ("Oh sure, the heads 'genuinely differ' ...", "Sure, because
# splitting a matrix doubles its size", "Yeah right, ..."): the student mocks what the sentence
# says, and claims none of it (mocking a wrong view takes nothing from the right one they state
# after it; mocking the right one leaves it unclaimed)
SARCASM = re.compile(
    r"^(?:(?:oh|ah|yeah|well)(?: ,)?(?: (?:yes|yeah))?(?: ,)? (?:sure|of course|right|totally|"
    r"great|absolutely)(?! not\b)"
    r"|yeah (?:, )?right|(?:sure|right|of course) , (?:because|and|since|as if))(?: [,:])?(?= |$)"
)
# a verdict left open ("Verdict: ???", "Conclusion: unclear", "My answer: no idea"): the student
# decides nothing, so what the answer set out before it is neither claimed nor denied (a bare
# label asks it: the sentence ends in "?")
OPEN_VERDICT = re.compile(
    r"^(?:(?:my|our|the|final|so|overall) )*(?:verdict|conclusion|answer|take|bottom line)"
    r"(?: [:,])?(?P<open> (?:unclear|unsure|not sure|undecided|open|unknown|no idea|idk|dunno|"
    r"(?:i )?do not know|pending|tbd|who knows|(?:i )?can not (?:say|tell)|none yet))?$"
)
# a true/false sheet's label opening a statement ("True: X", "False: X", "True/False?: X",
# "True or false, not sure: X"): in an answer of two or more such items each label judges the
# statement after it, not the sentence before (one item alone keeps the verdict reading: "False:
# they share one Wq" after a claim judges that claim)
TF_LABEL = re.compile(
    r"^(?:(?P<open>(?:true (?:/|or) false|false (?:/|or) true|t / f)"
    r"(?: (?:[;,] )?(?:not sure|unsure|no idea|dunno|(?:i )?do not know))?)"
    r"|(?P<true>true|t)|(?P<false>false|f)) [:—–-] "
)
# "..., they didn't" / "We don't." after a condition: what it supposes is not so
# "..., but now I see they don't" / "..., but in fact it isn't" after a view reported or given
# up ("I used to think X"): the student's own short answer to it ("they do" keeps it)
NOW_SEE = re.compile(
    r" (?:but|yet|however) (?:(?:now|actually|in fact|really|then|later) )*(?:(?:i|we) "
    r"(?:(?:now|later|then) )?(?:see|know|found|find|realise|realize|realised|realized|learned|"
    r"learnt|saw|noticed|checked)(?: that)? |it turns out(?: that)? |it turned out(?: that)? )?"
    r"(?:they|it|that|this) (?:do|does|did|is|are|was|were|can|will|would|have|has)"
    r"( not)?(?= [:;,]|$)"
)
NOT_SO = re.compile(
    r"^(?:(?:but|and|yet) )?(?:they|it|we|that|this|he|she|which|there|you|i) (?:do|does|did|is|"
    r"are|was|were|has|have|had|can|will|would) not(?: (?:so|that|though))?(?= [:;,]|$)"
)


# ------------------------------------------------------------------ attribution as grammar
# A clause whose subject names a person, a group or a source other than the student, followed
# by a verb of saying or believing, reports what follows (stance.py, _attribute): "a classmate
# swears ...", "folks online reckon ...", "the guy next to me in lab thinks ...", "my notes from
# lecture say ...". The words are compared by their stems (text.stem), so every inflection of a
# verb or a noun is in; irregular forms are listed as well.
SAYING = frozenset(
    """say said claim think thought believe reckon swear swore sworn insist argue suggest tell
    told write wrote written state mention assume suppose guess hear heard explain convinced
    maintain assert feel felt expect warn teach taught preach contend posit hint imply
    implied conclude concluded""".split()
)
# the verbs of belief among them: only a person holds a belief, so any subject of one that is not
# the student nor their evidence is someone else ("my housemate reckons", "some dude swears");
# a verb of saying ("says", "states", "shows") also has things for its subject ("the output
# says 256"), so it reports only after a subject that names people or a source (SOURCES)
BELIEVING = frozenset(
    """claim think thought believe reckon swear swore sworn insist argue tell told assume suppose
    guess convinced maintain assert feel felt contend posit conclude concluded""".split()
)
# the head of a subject that names people or a source other than the student
SOURCES = frozenset(
    """people person folk folks others someone somebody anyone anybody everyone everybody
    classmate friend buddy mate roommate cousin brother sister partner peer colleague tutor
    teacher instructor professor prof lecturer ta tas guy guys girl student senior reviewer
    critic sceptic skeptic expert engineer researcher author group team internet web blog post
    forum thread site website video youtube youtuber discord reddit redditor overflow chatgpt
    gpt llm article paper book textbook tutorial comment commenter docs documentation
    consensus solution solutions""".split()
)
# pronouns that name someone else when they open the clause
SOURCE_PRONOUNS = frozenset("they he she someone somebody everyone everybody".split())
# the course's own material as the subject: cited (half credit), not reported
COURSE_SOURCES = frozenset(
    """module lecture lectures notes note slides slide notebook handout handouts course worksheet
    reading readme""".split()
)
# words that may stand between a subject and its verb of saying: modals, adverbs, auxiliaries
# ("keeps insisting", "seems to believe", "is convinced", "has always said")
BETWEEN = frozenset(
    """may might could would will can should must often usually sometimes always still also
    just even all really honestly apparently once probably definitely clearly keep keeps kept
    keeping seem seems seemed to tend tends like likes love loves is are was were be been has
    have had do does did online here there again literally basically firmly strongly
    genuinely""".split()
)
# words that open a noun phrase's post-modifier: "the guy next to me in lab", "critics of the
# plan", "people on Discord", "my notes from lecture", "someone in my study group"
POST_MODIFIERS = frozenset(
    "of on in at from next around across near behind over who online".split()
)
# the student's own evidence: "according to my run" is no report
OWN_EVIDENCE = frozenset(
    """run runs experiment experiments result results check checks test tests code calculation
    calculations count counts output outputs measurement measurements printout numbers heatmap
    heatmaps plot plots figure figures table tables graph graphs data formula math shape shapes
    model layer head heads question""".split()
)
# words that are no subject naming someone else
NOT_SOMEONE = frozenset(
    "i we you me us it this that there which what who one nobody none no anyone anybody".split()
)
# someone else's words however they are put in: "My TA: X" (a note's label, read as "my ta ,
# X"), "X, says my TA, ...", "in my TA's words, X"
SOURCE_LABEL = re.compile(rf"^{DET}(?:[a-z]+ )?{PEOPLE} [,:] ")
SAYS_SOURCE = re.compile(
    rf" [,;(—–-] (?:says|said|claims|claimed|insists|swears|reckons) {DET}(?:[a-z]+ )?{PEOPLE}"
    r"(?= [,;:)]|$)"
)
IN_WORDS = re.compile(rf"\bin {DET}?(?:[a-z]+ )?{PEOPLE} (?:own )?words\b")
HEARSAY = re.compile(
    r"\b(?:supposedly|reportedly|allegedly|purportedly|ostensibly"
    r"|(?:rumou?r|legend) has it(?: that)?"
    r"|word (?:(?:around|in|on|at|among) (?:the |my |our )?[a-z]+ )?(?:is|has it)(?: that)?"
    r"|the story goes(?: that)?"
    r"|the (?:consensus|word|rumou?r|talk|gossip)(?: (?:on|in|at|among|around|online|out there)"
    r"(?: (?:the|my|our))?(?: [a-z]+){0,2})? (?:is|was)(?: that)?"
    r"|from what (?:i|we) (?:hear|heard|have heard|m told|am told|have been told|"
    r"(?:have )?read online|saw online)"
    r"|(?:or )?so (?:i|we) (?:hear|heard|am told|m told|have been told)$)\b"
)
# what the student says of what came before to make it theirs: "..., and she was right",
# "which is true", "and I agree", "after printing the weights I agree with her", "my own
# experiment agreed", "which turned out to be true", "and it is"
ENDORSE_CLAUSE = (
    r"(?:(?:after|having|once|when|since) (?:[a-z_0-9]+ ){1,8}?)?"
    r"(?:(?:i|we) (?:(?:can|fully|totally|completely|also|do|would|now) )*(?:agree|agreed|concur)"
    r"(?: (?:with (?:her|him|them|it|that|this|the claim|this claim|that claim)|on (?:that|this)))?"
    r"|(?:i|we) (?:(?:also|later|then|since|have|can) )*(?:confirmed|confirm|verified|verify|"
    r"checked|check) (?:it|this|that)"
    r"|(?:i|we) (?:think|believe|would say|reckon) (?:that )?(?:it|that|this|they|she|he|which) "
    rf"(?:{BE} )?{ADV}{POS_VERDICT}"
    r"|(?:my|our) (?:own )?(?:experiment|run|check|test|results?|code|notebook|output|printout|"
    r"numbers|heatmaps?|plots?|measurements?)s? (?:(?:also|later) )?(?:agreed|agrees|confirmed|"
    r"confirms|bears? (?:that|this|it) out|bore (?:that|this|it) out|backs? (?:that|this|it) up|"
    r"backed (?:that|this|it) up|showed (?:the same|it|that)|shows (?:the same|it|that)|"
    r"(?:gave|gives|got|printed|returned) (?:the same|it|that))"
    r"(?: (?:it|this|that|them|him|her))?"
    # "and that's what I saw in the notebook too", "which is exactly what I got", "and I got the
    # same in my run": the student's own finding agrees
    # ("exactly" reads as "evenly" by the time cues are matched: "divides exactly")
    r"|(?:which|that|this|it) (?:is|s|was) (?:(?:exactly|evenly|also|just|precisely|indeed) )?"
    r"(?:what|how) (?:i|we) (?:(?:also|then|later) )?(?:saw|see|found|find|got|get|measured|"
    r"observed|printed)(?: [a-z_0-9]+){0,5}?"
    r"|(?:i|we) (?:(?:also|then|later) )?(?:saw|found|got|measured|observed|printed) (?:the same|"
    r"that|this|it|so)(?: [a-z_0-9]+){0,5}?(?: too| as well)?"
    r"|(?:which|that|this|it) (?:(?:later|indeed|also) )?turned out (?:to be )?(?:true|right|"
    r"correct|so|the case)"
    # the passive: "and this was borne out in my run", "which my notebook confirmed"
    r"|(?:which|that|this|it) (?:(?:is|was|has been) )?(?:(?:also|later|indeed) )?(?:borne out|"
    r"confirmed|verified|backed up|reproduced) (?:in|by) (?:my|our) (?:own )?(?:experiment|run|"
    r"check|test|results?|code|notebook|output|printout|numbers|heatmaps?|plots?|"
    r"measurements?)s?"
    rf"|(?:she|he|they|which|that|this|it) (?:(?:is|are|was|were|s) )?{ADV}{POS_VERDICT}"
    r"|(?:it|they|that|this|he|she) (?:is|are|was|were|does|do|did|has|have)(?= [:;,]|$))"
)
# an endorsement that rests on the student's own finding ("which is what I got", "my run
# confirmed it"), not only on agreeing
OWN_FINDING = re.compile(
    r"\b(?:i|we) (?:(?:also|then|later|have|can) )*(?:saw|see|found|find|got|get|measured|"
    r"observed|printed|confirmed|confirm|verified|verify|checked|check)\b"
    r"|\b(?:my|our) (?:own )?(?:experiment|run|check|test|results?|code|notebook|output|"
    r"printout|numbers|heatmaps?|plots?|measurements?)s?\b"
)
ENDORSE_TAIL = re.compile(
    rf" (?:[,;:(—–-]|and|but|so)(?: and| but| so)? {ENDORSE_CLAUSE}(?= [:;,]|$| because| since)"
)
ENDORSE_SENTENCE = re.compile(rf"^(?:(?:and|but|so|well|honestly) )?{ENDORSE_CLAUSE}$")


# ------------------------------------------------------------- backing withdrawn, irony
# The student withdrawing their backing from what they wrote before it, wherever in the answer
# the disclaimer stands: a small lexicon of predicates (retract, have no view of one's own, not
# know or not check oneself, copied, leave it to the reader or to later), each with what makes
# it the student's own withdrawal ("myself", "actually", "of my own": "I'm not sure" after a
# claim of their own is a hedge, "no idea why" leaves only the reason open). What it governs is
# everything the answer says before it (stance.py, _withdrawn): neither claimed nor denied.
_WHAT_BEFORE = (
    r"(?:(?:all )?(?:of )?(?:that|this|it)|the above|everything (?:above|before)|"
    r"what (?:i|we) (?:just )?(?:said|wrote|put)|my (?:answer|first answer)|"
    r"the first (?:part|line))"
)
_ONESELF = r"(?:myself|ourselves|for myself|personally|of my own|of our own|either way)"
WITHDRAWN = re.compile(
    # a retraction: "scratch that", "ignore that", "disregard what I wrote", "forget all that"
    rf"\b(?:scratch|strike|ignore|disregard|forget|delete|cross out|take back) {_WHAT_BEFORE}"
    r"(?= [,;:]|$)"
    # no view of one's own: "I have no opinion", "no opinion either way", "no idea myself"
    rf"|\b(?:(?:i|we) (?:have |ve |had )?)?no (?:real |personal )?(?:opinion|view|stance)"
    rf"(?: (?:on (?:it|this|that)|{_ONESELF}))?(?= [,;:]|$)"
    rf"|\b(?:(?:i|we) (?:have |ve |had )?)?no (?:idea|clue) {_ONESELF}(?= [,;:]|$)"
    # ... not any more, at the end of a diary or a train of thought: "no idea now", "don't know
    # any more"
    r"|(?:^|(?<=[,;:—–-]) |\b(?:i|we) (?:have |ve |had )?)"
    r"(?:no (?:idea|clue)|(?:do not|did not) know) (?:now|any more|anymore|at this point)"
    r"(?= [,;:]|$)"
    # undecided with the subject left out: "-> (a) or (c), can't decide"
    r"|(?<=[,;:] )(?:still )?(?:could not|cannot|can not|did not|never) (?:decide|make up "
    r"(?:my|our) minds?)(?= [,;:]|$)"
    # a verdict put off: "A: deferred until I have data", "Assessment pending."
    r"|^(?:(?:assessment|verdict|answer|conclusion|decision) )?(?:deferred|postponed|pending|on "
    r"hold)\b"
    # a condition whose premise the student could not establish: "If X, then Y - but I couldn't
    # find out whether X": both stay inside the condition
    r"|^(?:dear [a-z ]{1,40} , )?if\b.{0,300}? (?:i|we) (?:could not|can not|did not|was not able "
    r"to|were not able to|never|have not been able to) (?:find out|establish|work out|determine|"
    r"figure out|confirm|verify|check) (?:whether|if)\b"
    # ... or none reached: "I couldn't decide which", "and still can't make up my mind"
    r"|\b(?:i|we|and) (?:still )?(?:could not|cannot|can not|did not|never) (?:decide|make up "
    r"(?:my|our) minds?)(?: (?:which|between|whether|if|what)\b|(?= [,;:]|$))"
    # not knowing it oneself: "I don't actually know (what changes)", "I don't know myself"
    rf"|\b(?:i|we) (?:do not|did not) (?:actually know|know {_ONESELF})\b"
    # not checked oneself: "didn't check myself", "never verified it myself", "(I) haven't run
    # it myself" (a note drops the subject)
    r"|(?:^|(?<=[,;:]) |\b(?:i|we) )(?:did not|have not|had not|never|not) "
    r"(?:(?:really|actually) )?(?:check|checked|verify|verified|test|tested|run|ran|confirm|"
    r"confirmed|try|tried)"
    rf"(?: (?:it|that|this|them|any of (?:it|this|that)))? {_ONESELF}(?= [,;:]|$)"
    # ... or heard elsewhere and not checked: "heard that on the course Discord, didn't check",
    # "read it in a thread and never verified it"
    r"|\b(?:heard|read|saw|got|picked up) (?:it|that|this) (?:on|from|in|at) (?:[a-z_0-9]+ ){1,6}"
    r"(?:, |and )(?:but )?(?:(?:i|we) )?(?:did not|have not|had not|never) (?:check|checked|"
    r"verify|verified|test|tested|confirm|confirmed)(?: (?:it|that|this))?(?= [,;:)]|$)"
    # not one word of it checked: "I haven't verified a word of it"
    r"|\b(?:did not|have not|had not|never|not) (?:check|checked|verify|verified|test|tested|"
    r"confirm|confirmed) (?:a (?:single )?word|one word|a (?:single )?line|a thing|one bit) "
    r"of (?:it|this|that|them)\b"
    # heard, and not checked: "..., or so I've heard, didn't verify"
    r"|\bor so (?:i|we) (?:have )?(?:heard|been told|read|am told|m told)(?: ,| and| but)* "
    r"(?:(?:i|we) )?(?:did not|have not|never|not) (?:check|checked|verify|verified|confirm|"
    r"confirmed|test|tested)\b"
    # copied from someone else: "I copied that line from someone's notes", "pasting it because
    # ...", "not my own words"
    r"|\b(?:i|we) (?:just |only )?(?:copied|pasted|lifted|cribbed) (?:it|that|this|them|all of it|"
    r"(?:that|this|these|those|the) (?:line|lines|answer|bit|part|sentence|sentences|text|reply))\b"
    r"|\b(?:pasting|copying) (?:it|this|that|them)\b"
    r"|\bnot my (?:own )?(?:words|answer|work|writing)\b"
    # the reader, or later work, left to decide: "draw your own conclusions", "make of it what
    # you will", "we leave the verification of this premise to future work", "which we leave to
    # future work", "this remains to be verified"
    r"|\bdraw your own conclusions?\b|\bmake of (?:it|that|this) what you (?:will|want)\b"
    # ... or the decision put off: "think on it and tell me next week", "sleep on it"
    r"|\b(?:think|sleep) (?:on|about|over) (?:it|this|that) and (?:tell|get back to) (?:me|us)\b"
    r"|\btell (?:me|us) (?:next (?:week|time|class|lesson)|tomorrow|later)\b|\bsleep on it\b"
    r"|\bjudge for yourselves?\b"
    r"|\b(?:i|we) leave (?:(?:the )?(?:verification|proof|checking|confirmation|testing) of )?"
    r"(?:(?:it|this|that)(?: (?:premise|claim|assumption|conjecture|question|point))? )?"
    r"(?:to|for) (?:future work|later work|the reader|others)\b"
    r"|\b(?:this|that|it|which) (?:remains|is left|has yet) to be (?:verified|shown|checked|"
    r"confirmed|proven|proved|seen|tested)\b"
)
# ownership refused, or the source called unreliable: the student says outright that what the
# answer gives is not theirs ("not mine", "her answer, not mine", "I don't hold this position",
# "playing devil's advocate", "the answer I'm not giving", "I'm not putting my name to it"), or
# that where it comes from cannot be trusted or placed ("I've been told they're unreliable",
# "I don't check her maths", "whether they meant this lab, I couldn't tell you"), or that it is
# there only to fill the space ("only so the box isn't empty"). Unlike a retraction, this governs
# the whole sentence it stands in, so a quotation it introduces ("..., and I don't check her
# maths: '...'") is unclaimed too, and every sentence before it (stance.py, _withdrawn).
_HELD = (
    r"(?:this|that|it|any of (?:it|this|that)|(?:this|that|the|such an?) (?:position|view|"
    r"answer|claim|take|argument|line))"
)
OWNERSHIP_REFUSED = re.compile(
    rf"\b(?:i|we) (?:do not|did not|would not|will not|cannot|can not|could not) (?:hold|share|"
    rf"endorse|defend|own|vouch for|stand behind|stand by|sign off on) {_HELD}\b"
    r"|\bnot (?:mine|ours)\b|\bnot my (?:own )?(?:view|position|claim|take|opinion)\b"
    r"|\bnot (?:a|the|an) (?:view|position|claim|take|opinion|answer) (?:i|we) (?:hold|share|"
    r"endorse|would defend|stand behind)\b"
    r"|\b(?:treat|take|read|count) (?:this|that|it) as (?:her|his|their|someone else|somebody else)"
    r"(?: s)? (?:answer|view|words|claim|work)\b"
    r"|\b(?:i|we)(?: m| am| are)? not (?:putting|signing|attaching) (?:my|our) names? "
    r"(?:to|on|under)\b"
    r"|\bdevil (?:s )?advocate\b"
    r"|\b(?:the |an |this |that )?answer (?:i|we)(?: m| am| are)? (?:not giving|not going to give|"
    r"will not give|refuse to give)\b"
    r"|\b(?:i|we)(?: m| am| are)? not (?:giving|offering|handing in|handing|submitting|turning in|"
    r"presenting|putting forward|passing off) (?:[a-z_0-9]+ ){0,4}?as (?:my|our) (?:own )?"
    r"(?:answer|view|position|claim|work)\b"
    # not taking it on: "Upvotes aren't evidence, and I'm not adopting it"
    r"|(?:\b(?:i|we)(?: m| am| are)? (?:not|never|do not|will not|would not|refuse to)|"
    # ... with the subject left out: "I'm reporting it, not taking it on"
    r"(?:[,;]|\bbut) not) "
    r"(?:(?:adopting|adopt|taking on|take on|going with|go with) (?:it|this|that|them|(?:this|"
    r"that|the|their|her|his|its) (?:answer|view|claim|reply|line|position|take))"
    r"|(?:taking|take) (?:it|this|that|them) (?:on|up))(?= [,;:]|$)"
    # what came out of a tool or a source, not stood behind: "so I don't stand behind what came
    # out", "I won't vouch for what it says"
    r"|\b(?:i|we) (?:do not|did not|would not|will not|can not|could not) (?:stand behind|"
    r"stand by|vouch for|endorse) what (?:came out|comes out|it says|it said|they say|they said)\b"
    # too little understood to agree: "I didn't follow enough of it to agree with them"
    r"|\b(?:i|we) (?:do not|did not|can not|could not) (?:follow|understand|know|get) enough"
    r"(?: of (?:it|this|that|them))? to (?:agree|judge|say|endorse|back)\b"
    # the answer withheld in so many words: "In this universe I didn't, so I'm not writing it."
    r"|\b(?:i|we)(?: m| am| are)? (?:not|will not|would not|refuse to) (?:writing|write|"
    r"putting|put|saying|say) (?:it|that|this|them)(?: down)?(?= [,;:]|$)"
    # the student's own view withheld: "What I actually think, I'll keep to myself."
    r"|\b(?:i|we) (?:will |shall |would |am going to |m going to )?keep (?:(?:it|that|this|"
    r"(?:my|our) (?:own |real |actual )?(?:view|views|opinion|opinions|answer|thoughts?|take)) )?"
    r"to (?:myself|ourselves)\b"
    # an answer written for the marks, not held: "what I'd write if I wanted the marks", "the
    # marks rather than the truth" ("rather than" reads ", not")
    r"|\bwhat (?:i|we) (?:would )?(?:write|say|answer|put|hand in) if (?:i|we) (?:only |just )?"
    r"(?:wanted|were after|was after|cared about) (?:the )?(?:marks?|points?|grade|credit)\b"
    r"|\b(?:marks?|points?|grade|credit) , not (?:the )?truth\b"
    r"|\bso (?:the|this|my|our) (?:box|field|space|page|answer) (?:is not|was not|is not left|"
    r"was not left|does not stay|would not be) (?:empty|blank)\b"
    r"|\b(?:they|it|these|those|this|that|which)(?: are| is| were| was| may be| might be)? "
    r"(?:(?:quite|very|pretty|often|notoriously|known to be|said to be) )?(?:unreliable|"
    r"untrustworthy)\b"
    r"|\b(?:i|we) (?:do not|did not|never|have not|had not) (?:check|checked|verify|verified) "
    r"(?:her|his|their|its) (?:maths|math|work|numbers|working|sums|answers?|notes|claims?)\b"
    r"|\b(?:i|we) (?:could not|cannot|can not) (?:tell you|say)(?= [,;:]|$)"
)
# a quotation: words inside quotation marks, an apostrophe inside a word ("don't") no mark;
# one of QUOTATION_MIN_WORDS words or more is someone's statement, not a term in scare quotes
QUOTATION = re.compile(r"(?<![\w])[\"“'‘]((?:[^\"“”'‘’\n]|(?<=\w)['’](?=\w))+?)[\"”'’](?![\w])")
QUOTATION_MIN_WORDS = 5
# what introduces a quotation as someone else's (stance.py, unendorsed_quotations): a person, a
# group or a text as its source ("my sister texted me", "overheard at the next table", "from my
# partner's notes", "last year's exam solutions", "patch notes I read"), or a verb of saying
QUOTATION_SOURCE = re.compile(
    r"\b(?:her|his|their|someone|somebody|everyone|everybody|people|they)\b"
    r"|\b(?:said|says|say|saying|texted|messaged|wrote|writes|told|tells|tweeted|posted|"
    r"overheard|heard|claims?|claimed|insists?|reckons?|goes|went)\b"
    r"|\b(?:notes|solutions?|forum|thread|post|blog|article|video|friend|classmate|sister|"
    r"brother|cousin|partner|roommate|flatmate|mate|tutor|ta|professor|senior|group chat|"
    r"discord|reddit|chatgpt|textbook|book|paper|exam)\b|\w's\b"
)
# ...unless it is the student's own evidence or the course's material they quote as evidence
# ("my run printed", "the table read", "the module's docstring says", "I wrote"), or the
# student endorses it anywhere after it ("I agree", "which matches my run", "and that's right")
QUOTATION_OWN = re.compile(
    r"\b(?:i|we) (?:(?:also|then|just|had|have|would|d) )*(?:saw|see|found|got|get|measured|"
    r"observed|printed|wrote|write|say|said|put|answered|concluded|noted|logged|ran)\b"
    r"|\b(?:my|our) (?:own )?(?:experiment|run|check|test|results?|code|notebook|output|printout|"
    r"numbers|heatmaps?|plots?|measurements?|answer|words|notes|cell|log)\b"
    r"|\b(?:printed|prints|printing|returned|returns|output|outputs|error|raised|assert|"
    r"traceback|docstring|module|notebook|lab|lecture|slides?|handout|course)\b"
)
QUOTATION_ENDORSED = re.compile(
    r"\b(?:i|we) (?:(?:fully|totally|completely|also|do|would|now|can) )*(?:agree|concur)\b"
    r"|\b(?:which|that|this|it|and it) (?:(?:also|exactly|fully) )*(?:matches|matched|agrees|"
    r"agreed|fits|fit|squares)\b"
    r"|\b(?:which|that|this|it|and it|she|he|they)(?:'s| is| was| were| are) (?:(?:exactly|"
    r"quite|completely|totally|absolutely) )?(?:right|correct|true|spot on|what i (?:got|found|"
    r"saw|measured))\b"
    r"|\b(?:i|we) (?:(?:also|then|later|have|had|can) )*(?:confirmed|verified|checked|"
    r"reproduced|got the same|found the same|saw the same)\b"
    r"|\bsounds right\b|\bsame (?:as|in) my\b|\bmy (?:run|results?|output|numbers|code) "
    r"(?:agrees?|matches|match|says? the same|showed the same|confirms?|confirmed)\b"
)
# irony: what a sarcastic answer says it mocks (scare quotes around its key terms, "heaven
# forbid", a mock "Oh yes," and a closing "Sure."); one sign alone may be a manner of speaking,
# two make the answer mockery, and nothing in it is the student's claim (stance.py, _ironic)
IRONY_OPENING = re.compile(
    r"^(?:oh|ah)(?: ,)? (?:yes|yeah|sure|right|of course|totally|absolutely|definitely)\b"
)
IRONY_INLINE = re.compile(
    r"\b(?:(?:heaven|heavens|god|lord) forbid|perish the thought|yeah (?:, )?right|"
    r"because (?:obviously|of course) (?:that|this|it) (?:is|makes) (?:how|sense))\b"
)
IRONY_CLOSER = re.compile(
    r"^(?:(?:oh|ah|yeah|yes) (?:, )?)?(?:sure|right|of course|totally|obviously|absolutely|"
    r"definitely|makes total sense|very convincing)$"
)
# a term in scare quotes: one to three words quoted inside running text ('its "equal chunk"',
# 'd_model "must" be'), not a whole quoted sentence
SCARE_QUOTES = re.compile(r"(?<=[\w,] )[\"“]([A-Za-z_][\w' -]{0,30}?)[\"”](?=[\s,.;:!?)])")
# an AI assistant's reply pasted in: its boilerplate, as such replies word it (flags.py)
AI_REPLY = re.compile(
    r"\bas an ai(?: language)? model\b|\bas a (?:large )?language model\b"
    r"|^\W*(?:certainly|absolutely|of course|sure|great question|good question|excellent "
    r"question)\s*!"
    r"|\bhere(?:'s| is) (?:a|an|the|your) (?:[\w-]+ ){0,4}?(?:answer|explanation|summary|"
    r"response|overview)\b\s*:"
    r"|\bi hope (?:this|that) helps\b|\blet me know if you(?:'d| would) like\b"
    r"|\bfeel free to (?:ask|let me know)\b|\bi don'?t have the ability to\b",
    re.IGNORECASE | re.MULTILINE,
)
