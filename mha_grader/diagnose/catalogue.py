"""Known mistakes (docs/contract.md §6): what each one does and what a student is told.

Every message has three parts, in the module's own terms: what the code did, why that is wrong,
and a nudge toward the fix. None shows answer code or any hidden test's inputs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Misconception:
    id: str
    where: str  # the contract function the mistake lives in
    did: str
    why: str
    nudge: str

    @property
    def message(self) -> str:
        return f"{self.did} {self.why} Hint: {self.nudge}"


_ENTRIES = [
    Misconception(
        "softmax-wrong-axis",
        "softmax",
        "Your softmax normalises along a different axis from the one it is asked for (it ignores "
        "`axis`, or uses a fixed axis).",
        "In attention every query's row of scores becomes a probability distribution over the "
        "keys, so the entries must sum to 1 along the axis the caller names.",
        "use the `axis` argument in both the max and the sum, and check that the result sums to 1 "
        "along `axis` for a 3-D input and for axis=0.",
    ),
    Misconception(
        "softmax-unstable",
        "softmax",
        "Your softmax is right for moderate scores but gives nan, inf or zeros when scores are "
        "large (about 1e3 to 1e4): exp overflows or underflows.",
        "Softmax does not change when every entry along the axis is shifted by the same constant; "
        "shifting by each row's maximum makes the largest exponent exp(0) = 1, so nothing "
        "overflows.",
        "subtract the maximum along `axis` (keeping that axis) before taking exp.",
    ),
    Misconception(
        "softmax-no-keepdims",
        "softmax",
        "Your softmax takes the max or the sum along `axis` without keeping that axis, so it "
        "broadcasts back along the wrong axis: it raises for some shapes and gives wrong numbers "
        "for square ones.",
        "Each row's own max and sum must act on that same row; a reduced array of shape (n,) "
        "lines up with the last axis, not with the rows.",
        "keep the reduced axis (`keepdims=True`) for the max and for the sum, so they have size 1 "
        "along `axis`.",
    ),
    Misconception(
        "softmax-global",
        "softmax",
        "Your softmax normalises over the whole array: all entries together sum to 1, instead of "
        "each slice along `axis`.",
        "Each query gets its own distribution over the keys; normalising over everything makes "
        "queries (and heads) compete with each other and shrinks every weight.",
        "reduce (max and sum) along `axis` only.",
    ),
    Misconception(
        "split-no-transpose",
        "split_heads",
        "Your split_heads returns the right shape (num_heads, n, d_head) by reshaping the "
        "(n, d_model) matrix straight into it, so a head's rows mix features of different tokens.",
        "A head is a slice of the feature axis: head h holds features h*d_head to "
        "(h+1)*d_head - 1 of every token. A reshape keeps the memory order (token by token), so "
        "the head axis must be separated from the token axis first and then moved to the front.",
        "reshape to (n, num_heads, d_head) first, then move the head axis to the front.",
    ),
    Misconception(
        "split-interleaved",
        "split_heads",
        "Your split_heads deals features out to the heads round-robin (head 0 gets features 0, "
        "num_heads, 2*num_heads, ...).",
        "Each head owns one contiguous block of d_head features, the h-th chunk; merge_heads and "
        "the rows of Wo rely on that layout.",
        "split the feature axis as (num_heads, d_head), heads being the slower-changing index.",
    ),
    Misconception(
        "split-token-axis",
        "split_heads",
        "Your split_heads cuts the token axis into groups instead of the feature axis: each head "
        "gets a few tokens with all their features.",
        "Every head attends over all n tokens; what differs between heads is which d_head "
        "features of each token they see.",
        "keep all n tokens in every head and divide the d_model features into num_heads chunks.",
    ),
    Misconception(
        "merge-no-transpose",
        "merge_heads",
        "Your merge_heads reshapes (num_heads, n, d_head) straight to (n, d_model) without moving "
        "the head axis, so a row of the result mixes different tokens.",
        "Merging is the inverse of splitting: token i's row is head 0's output for token i, then "
        "head 1's output for token i, and so on.",
        "bring the token axis to the front, (n, num_heads, d_head), and only then flatten the last "
        "two axes.",
    ),
    Misconception(
        "merge-reversed-heads",
        "merge_heads",
        "Your merge_heads concatenates the heads in reverse order (last head first).",
        "Head h's features must come back in block h, where split_heads took them from; the "
        "output projection Wo pairs each block with its own rows.",
        "concatenate the heads in order 0, 1, ..., num_heads - 1.",
    ),
    Misconception(
        "scale-missing",
        "attention",
        "Your attention does not scale the scores Q Kᵀ by 1/sqrt(d_k).",
        "Dot products of d_k-dimensional vectors grow like sqrt(d_k); unscaled, softmax saturates "
        "towards one-hot weights.",
        "divide the scores by the square root of the query/key width (the last axis of Q).",
    ),
    Misconception(
        "scale-not-sqrt",
        "attention",
        "Your attention divides the scores by d_k instead of sqrt(d_k).",
        "The spread of a dot product of d_k-dimensional vectors grows like sqrt(d_k), so "
        "sqrt(d_k) brings the scores back to unit scale; d_k over-flattens the weights.",
        "divide by the square root of d_k.",
    ),
    Misconception(
        "scale-d-model",
        "multi_head_attention",
        "Your multi-head attention scales each head's scores by sqrt(d_model) instead of "
        "sqrt(d_head).",
        "Each head takes dot products of its own d_head-dimensional slices, so the scale is set "
        "by the head's width d_head = d_model / num_heads, not by the model's width.",
        "scale by the square root of the per-head query width.",
    ),
    Misconception(
        "attention-transpose-v",
        "attention",
        "Your attention transposes V instead of K: the scores use Q times K untransposed and the "
        "output uses Vᵀ, which only runs when the shapes happen to be square.",
        "Scores compare every query with every key: (n, d_k) times Kᵀ (d_k, m) gives (n, m); the "
        "weights then average the rows of V: (n, m) times V (m, d_v).",
        "transpose K (its last two axes) for the scores and use V as it is.",
    ),
    Misconception(
        "attention-3d-transpose",
        "attention",
        "Your attention uses K.T, which on stacked heads (num_heads, m, d_k) reverses all three "
        "axes instead of swapping the last two: it works for one head (2-D) but fails or mixes "
        "heads when heads are stacked.",
        "attention must work with leading batch/head axes: each head's own keys are transposed, "
        "the head axis stays where it is.",
        "swap only the last two axes of K.",
    ),
    Misconception(
        "mha-no-output-projection",
        "multi_head_attention",
        "Your multi_head_attention returns the merged heads without the output projection Wo.",
        "After concatenation each token's features are still grouped by head; Wo mixes the "
        "heads' outputs into one d_model representation (and is one of the four d_model x "
        "d_model matrices in the parameter count).",
        "multiply the merged heads by Wo.",
    ),
    Misconception(
        "mha-heads-not-split",
        "multi_head_attention",
        "Your multi_head_attention runs one attention over all d_model features instead of "
        "splitting into heads, so every head has the same pattern.",
        "Multi-head attention projects once at full width, then cuts the features into "
        "num_heads slices and runs scaled dot-product attention per slice; that is what lets "
        "heads attend differently.",
        "split Q, K and V into heads, attend per head, then merge.",
    ),
    Misconception(
        "adapter-no-transpose",
        "weights_from_torch",
        "Your weights_from_torch copies torch's weight matrices as stored, without transposing.",
        "torch.nn.Linear stores a weight as (out_features, in_features) and computes x @ W.T, "
        "while our pipeline computes X @ W.",
        "transpose each block of in_proj_weight and out_proj.weight.",
    ),
    Misconception(
        "adapter-qkv-order",
        "weights_from_torch",
        "Your weights_from_torch takes the q, k and v blocks of in_proj_weight in the wrong order.",
        "in_proj_weight stacks the three projections row-wise, queries first, then keys, then "
        "values, each block d_model rows tall.",
        "take the blocks in the order the module stacks them.",
    ),
    Misconception(
        "adapter-averaged-weights",
        "cross_check",
        "Your cross_check compares your per-head weights with torch's head-averaged weights "
        "(what the module returns by default), so the weights never match.",
        "Heads attend differently; an average hides that, and a per-head pipeline must be "
        "compared head by head, (num_heads, n, n) against (num_heads, n, n).",
        "ask the module for per-head weights (look at average_attn_weights).",
    ),
    Misconception(
        "adapter-batch-first",
        "cross_check",
        "Your cross_check lays the sequence out one way whatever the module's batch_first says, "
        "so for modules of the other layout torch sees n sequences of one token (each token "
        "attends only to itself).",
        "With batch_first=False the module expects (n, batch, d_model); with batch_first=True, "
        "(batch, n, d_model). Its per-head weights are (batch, num_heads, n, n) either way.",
        "read mha.batch_first, add the batch axis where that layout wants it, and take it out "
        "of the output the same way.",
    ),
    Misconception(
        "scale-inverted",
        "attention",
        "Your attention multiplies the scores by sqrt(d_k) instead of dividing by it (dividing "
        "by 1/sqrt(d_k) does the same).",
        "Dot products of d_k-dimensional vectors grow like sqrt(d_k); dividing by sqrt(d_k) "
        "brings the scores back to unit scale, while multiplying makes them d_k times too large "
        "and pushes the softmax towards one-hot weights.",
        "make the scores smaller, not larger: divide them by the square root of the last axis "
        "of Q.",
    ),
    Misconception(
        "attention-scores-kq",
        "attention",
        "Your attention computes the scores as the keys times the queries (K Qᵀ) instead of "
        "the queries times the keys: the weights come out transposed, (..., m, n) instead of "
        "(..., n, m), the softmax runs over the queries, and the product with V fits only when "
        "n == m.",
        "Row i of the weights belongs to query i: it compares that query with every key and is "
        "a distribution over the m keys. With the queries on the left, the rows are queries "
        "and the last axis holds the keys.",
        "put Q on the left: the scores are Q times K with K's last two axes swapped.",
    ),
    Misconception(
        "attention-fixed-rank",
        "attention",
        "Your attention names axes by their position from the front (a transpose of K with a "
        "fixed list of axes, a softmax along axis 1 or 2, or d_k read from axis 1), which fits "
        "inputs of one rank only: with fewer or more leading axes it raises or mixes axes.",
        "attention must take 2-D inputs and inputs with any number of leading batch or head "
        "axes. Only the last two axes have a fixed meaning (tokens, then features), so they are "
        "the ones to name, counting from the end.",
        "count axes from the end: transpose K by swapping its axes -1 and -2, and normalise the "
        "scores along axis -1 (the keys).",
    ),
    Misconception(
        "attention-causal-mask",
        "attention",
        "Your attention masks the keys after each query's own position (a causal mask, as in "
        "GPT-style decoders): query i gets weight 0 on keys i+1, i+2, ...",
        "The attention of this module is unmasked: every query attends to every key, so each "
        "row of weights is a softmax over all m keys. A causal mask belongs to a decoder that "
        "generates one token at a time, and nothing in the contract asks for one.",
        "remove the mask: no score is set to -inf (or to a huge negative number) before the "
        "softmax.",
    ),
    Misconception(
        "mha-causal-mask",
        "multi_head_attention",
        "Your multi_head_attention masks each token's later tokens in every head (a causal "
        "mask, as in GPT-style decoders), in its own attention code or in a mask it passes on.",
        "Multi-head self-attention here is unmasked: in every head each token attends to all n "
        "tokens, those after it included; a causal mask belongs to a decoder that generates "
        "one token at a time.",
        "build no mask in multi_head_attention and let every head attend over all the tokens.",
    ),
    Misconception(
        "mha-qk-swapped",
        "multi_head_attention",
        "Your multi_head_attention uses the keys as queries and the queries as keys (the "
        "projection with Wk where the one with Wq belongs, or scores of keys times queries): "
        "every head's weights come out transposed.",
        "Row i of a head's weights compares token i's query with every token's key; swapping "
        "the roles transposes each pattern, so a token gets the weights other tokens would put "
        "on it.",
        "pass the queries (X projected with Wq) as attention's first argument and the keys (X "
        "projected with Wk) as its second.",
    ),
    Misconception(
        "mha-averaged-weights",
        "multi_head_attention",
        "Your multi_head_attention returns the weights averaged over the heads, shape (n, n), "
        "instead of one pattern per head, shape (num_heads, n, n).",
        "Heads attend differently, and distinct_head_pairs and cross_check compare the weights "
        "head by head; an average, which is what torch's module gives by default, hides the "
        "differences between heads.",
        "keep the weights of every head as attention gives them for the stacked heads, without "
        "reducing over the head axis.",
    ),
    Misconception(
        "mha-qkv-interleaved",
        "multi_head_attention",
        "Your multi_head_attention stacks the three projections side by side and cuts each "
        "head's block of 3 * d_head features into its queries, keys and values, as if they "
        "were interleaved head by head: a head's queries, keys and values come from the wrong "
        "projections (right only with one head).",
        "The first d_model features of the stacked projection are all queries, the next d_model "
        "all keys, the last d_model all values; a head's d_head queries are one slice of the "
        "queries.",
        "separate the stacked projection into queries, keys and values first (each d_model "
        "wide), then split each of them into heads.",
    ),
    Misconception(
        "mha-no-valueerror",
        "multi_head_attention",
        "Your multi_head_attention does not raise ValueError when num_heads does not divide "
        "d_model: it checks with assert (an AssertionError), raises another exception, or "
        "returns a result anyway.",
        "The contract asks for a ValueError, the exception for an argument with a bad value, "
        "so that callers can catch it; an assert is for the programmer's own invariants and "
        "disappears when Python runs with -O.",
        "test whether num_heads divides d_model yourself, before any work, and raise ValueError "
        "when it does not.",
    ),
    Misconception(
        "split-no-valueerror",
        "split_heads",
        "Your split_heads cuts M into heads (or fails with another exception) when M's last "
        "axis is not num_heads * d_head wide, instead of raising ValueError: it works the head "
        "width out from M and never compares it with d_head.",
        "A width that does not match is the caller's mistake (a wrong num_heads or d_head); "
        "heads of another width than d_head hide it until something far away breaks.",
        "compare M's last axis with num_heads * d_head first, and raise ValueError when they "
        "differ.",
    ),
    Misconception(
        "adapter-float32-weights",
        "weights_from_torch",
        "Your weights_from_torch returns the right numbers in the module's own dtype (float32 "
        "for a float32 module) instead of float64 arrays.",
        "The contract asks for float64 whatever the module's dtype, so that the NumPy pipeline "
        "computes in float64 for both kinds of module.",
        "convert each matrix to float64, in torch before taking it out or in NumPy after.",
    ),
    Misconception(
        "adapter-no-valueerror",
        "weights_from_torch",
        "Your weights_from_torch does not raise ValueError for a module it cannot convert (one "
        "with biases, or with separate query, key and value projections): it returns weights "
        "that leave the biases out, or fails with another exception.",
        "multi_head_attention has no biases and one width for queries, keys and values, so no "
        "four matrices reproduce such a module; refusing with ValueError tells the caller why.",
        "check the module's bias tensors (in_proj_bias, the output projection's bias, bias_k) "
        "and whether in_proj_weight exists (it is None with separate projections), and raise "
        "ValueError for those modules.",
    ),
    Misconception(
        "adapter-no-detach",
        "cross_check",
        "Your cross_check raises RuntimeError: it takes NumPy arrays out of torch tensors that "
        "still require gradients (the module's output and weights computed with autograd on).",
        "A module's outputs are tensors that remember how they were computed from its "
        "parameters, for backpropagation; torch refuses to hand such a tensor to NumPy before it "
        "is detached from that history.",
        "run the module inside torch's no_grad context, or detach the outputs before "
        "converting them.",
    ),
    Misconception(
        "counts-ignore-bias",
        "parameter_counts",
        "Your parameter_counts gives the count without biases when bias=True.",
        "With bias=True the module also has 4 * d_model bias parameters: 3 * d_model in "
        "in_proj_bias and d_model in the output projection's bias.",
        "build the module with the bias asked for and count its parameters, or count the "
        "biases too when bias is True.",
    ),
    Misconception(
        "counts-no-valueerror",
        "parameter_counts",
        "Your parameter_counts does not raise ValueError for a head count that does not divide "
        "d_model: it lets torch's own check fail (an AssertionError), raises another exception, "
        "or returns a count anyway.",
        "The contract asks for a ValueError that names the head count at fault; torch's module "
        "raises AssertionError for it, which callers catching ValueError do not expect.",
        "check every head count against d_model before building anything, and raise ValueError "
        "naming the one that does not divide it.",
    ),
    Misconception(
        "adapter-strict-tolerance",
        "cross_check",
        "Your cross_check reports no match for a float32 module although the differences are "
        "only float32 rounding: its tolerance is fit for float64.",
        "float32 keeps about 7 significant digits, so a correct float32 module differs from a "
        "float64 pipeline by about 1e-7 to 1e-5 relative to the output's size.",
        "choose the tolerance from the module's dtype, relative to the output's scale.",
    ),
    Misconception(
        "pairs-relative-tolerance",
        "distinct_head_pairs",
        "Your distinct_head_pairs calls two heads the same when their weights differ by a few "
        "times atol where the weights are large: it adds a relative tolerance to atol (as "
        "allclose and isclose do unless told otherwise).",
        "atol is an absolute bound: two patterns are the same only where every entry differs by "
        "at most atol. A relative tolerance of 1e-5 lets weights near 1 differ by ten times the "
        "default atol of 1e-6, so pairs of heads that really differ go missing.",
        "compare the largest absolute difference with atol alone (or set the relative tolerance "
        "to 0).",
    ),
    Misconception(
        "scale-seq-len",
        "attention",
        "Your attention divides the scores by the square root of the number of tokens (the "
        "keys' or the queries' count, an axis of K or Q other than the last) instead of "
        "sqrt(d_k): right only where that count happens to equal d_k.",
        "The scale undoes the growth of a dot product with the length of the vectors "
        "multiplied: d_k numbers per query and key, whatever the number of tokens. K of shape "
        "(..., m, d_k) holds m keys of width d_k; its second-to-last axis counts keys.",
        "take d_k from the last axis of Q (or of K), the width of the vectors whose dot "
        "products are the scores.",
    ),
    Misconception(
        "attention-dropout",
        "attention",
        "Your attention gives other results each time it is called on the same inputs: it "
        "draws random numbers, as the dropout on the attention weights of training code does.",
        "Dropout belongs to training (a framework switches it off at inference); this "
        "module's attention is a function of Q, K and V alone, so every call on the same "
        "inputs must give the same weights and the same output.",
        "remove the dropout (and any other random numbers): keep every weight, as the "
        "softmax gives it.",
    ),
    Misconception(
        "mha-dropout",
        "multi_head_attention",
        "Your multi_head_attention gives other results each time it is called on the same "
        "inputs: it draws random numbers in its own code, as a dropout on the attention "
        "weights in training code does.",
        "Dropout belongs to training (a framework switches it off at inference); this "
        "module's multi-head attention is a function of X and the four weight matrices alone, "
        "so every call on the same inputs must give the same result.",
        "remove the dropout (and any other random numbers) from multi_head_attention.",
    ),
    Misconception(
        "mha-last-head-weights",
        "multi_head_attention",
        "Your multi_head_attention returns the attention weights of its last head only, shape "
        "(n, n), instead of every head's, shape (num_heads, n, n): a loop over the heads "
        "collects every head's output but keeps only the weights of its last pass.",
        "The weights returned are one pattern per head, in head order; distinct_head_pairs and "
        "cross_check compare them head by head.",
        "collect each head's weights in the loop, as its outputs are, and stack them along a "
        "first axis of length num_heads.",
    ),
    Misconception(
        "adapter-fixed-dtype",
        "cross_check",
        "Your cross_check converts X to one fixed dtype (float32, as .float() gives, or "
        "float64) whatever the module's dtype: torch refuses an input of another dtype than "
        "the module's parameters, and cross_check raises RuntimeError for modules of the "
        "other dtype.",
        "A torch module computes in the dtype of its parameters and takes inputs of that "
        "dtype only; cross_check is given float32 and float64 modules alike.",
        "convert X to the dtype of the module's own parameters (its in_proj_weight's dtype).",
    ),
    Misconception(
        "counts-wide-heads",
        "parameter_counts",
        "Your parameter_counts gives every head projections of its own (d_model x d_model "
        "matrices per head, or of another width that does not shrink as heads are added), so "
        "the count grows with the number of heads: right for one head count at most.",
        "Multi-head attention projects once at full width and hands each head a d_head-wide "
        "slice of that projection: the module holds four d_model x d_model matrices (and "
        "4 * d_model biases) whatever the number of heads.",
        "count the four d_model x d_model matrices once (build the module and count its "
        "parameters, or use one formula with no number of heads in it).",
    ),
    Misconception(
        "softmax-global-max",
        "softmax",
        "Your softmax subtracts the maximum of the whole array (the max of x taken with no axis) "
        "instead of each slice's own maximum along `axis`: right while every slice lies near "
        "the largest entry, but a slice far below it (about 700 or more) underflows to 0/0 and "
        "gives nan.",
        "The shift works because softmax does not change when one slice is shifted by a "
        "constant; it keeps exp from overflowing and underflowing only when each slice is "
        "shifted by its own maximum, so that each slice's largest exponent is exp(0) = 1.",
        "take the maximum along `axis` with `keepdims=True` and subtract that, as you do for "
        "the sum.",
    ),
    Misconception(
        "mha-residual-norm",
        "multi_head_attention",
        "Your multi_head_attention adds its input X to the output (a residual connection) or "
        "normalises the output (a layer norm), or both: the weights are right, but the output "
        "is not the attention's.",
        "The residual connection and the layer norm belong to the Transformer layer around "
        "multi-head attention (Add & Norm); multi_head_attention itself ends with the output "
        "projection, as torch.nn.MultiheadAttention does.",
        "end with the merged heads times Wo, as they are, and leave the residual and the "
        "normalisation to the layer that calls multi_head_attention.",
    ),
    Misconception(
        "mha-prescaled-query",
        "multi_head_attention",
        "Your multi_head_attention scales the queries by 1/sqrt(d_head) itself before it calls "
        "attention, which scales the scores again: with an attention that scales, as the "
        "contract's does, the scores end up divided by d_head.",
        "Scaling the scores by 1/sqrt(d_k) is attention's job (scaled dot-product attention); "
        "multi_head_attention hands each head its queries, keys and values as the projections "
        "give them.",
        "pass the heads of X @ Wq to attention unscaled, and make sure your attention divides "
        "the scores by sqrt(d_k) itself.",
    ),
    Misconception(
        "split-heads-second-axis",
        "split_heads",
        "Your split_heads returns (n, num_heads, d_head): each token's features cut into its "
        "heads, with the heads on the second axis (the [T, H, K] layout of haiku and Flax) "
        "instead of the first.",
        "The contract's heads are stacked on the first axis, (num_heads, n, d_head), so that "
        "attention treats each head as one independent (n, d_head) slice; with the heads second, "
        "attention would mix heads and tokens.",
        "after the reshape to (n, num_heads, d_head), move the head axis to the front.",
    ),
    Misconception(
        "merge-heads-second-axis",
        "merge_heads",
        "Your merge_heads flattens the last two axes of its input as if it were (n, num_heads, "
        "d_head) (the [T, H, K] layout of haiku and Flax): for the contract's (num_heads, n, "
        "d_head) it returns (num_heads, n * d_head), each head's tokens side by side.",
        "merge_heads is the inverse of split_heads: it is given the heads on the first axis and "
        "must put each token's heads side by side, (n, num_heads * d_head).",
        "move the head axis behind the token axis first, (n, num_heads, d_head), then flatten "
        "the last two axes.",
    ),
    Misconception(
        "attention-returns-scores",
        "attention",
        "Your attention returns the scores (Q Kᵀ, scaled or not) as its weights: the logits "
        "before the softmax, as whisper's attention keeps them. Its output is right.",
        "The weights are the softmax of the scaled scores, the numbers the output is averaged "
        "with: every row is a probability distribution over the keys and sums to 1.",
        "hand back the softmax of the scores (the weights you multiply V by), not the scores.",
    ),
    Misconception(
        "mha-first-head-weights",
        "multi_head_attention",
        "Your multi_head_attention returns the attention weights of its first head only, shape "
        "(n, n), instead of every head's, shape (num_heads, n, n) (as OpenNMT's \"Return one "
        'attn" keeps attn[:, 0]).',
        "The weights returned are one pattern per head, in head order; distinct_head_pairs and "
        "cross_check compare them head by head.",
        "give back the weights of every head, stacked along a first axis of length num_heads.",
    ),
    Misconception(
        "counts-bias-partial",
        "parameter_counts",
        "Your parameter_counts counts some of the module's biases but not all of them with "
        "bias=True (a projection without a bias, as whisper's key projection has none).",
        "torch.nn.MultiheadAttention with bias=True has a bias for each of the q, k and v "
        "projections (in_proj_bias, 3 * d_model numbers) and one for the output projection "
        "(d_model): 4 * d_model biases.",
        "count the parameters of the module itself, or add all four d_model-wide biases when "
        "bias=True.",
    ),
    Misconception(
        "adapter-qkv-interleaved",
        "weights_from_torch",
        "Your weights_from_torch reads in_proj_weight as if it were laid out head by head, each "
        "head's query, key and value rows together (Megatron's fused query_key_value, "
        "[heads, 3, d_head, d_model]): each matrix it returns mixes query, key and value rows "
        "of several heads (right only with one head).",
        "torch stacks three full-width blocks in in_proj_weight, (3 * d_model, d_model): the "
        "first d_model rows are all the queries' (every head's, in head order), the next "
        "d_model all the keys', the last d_model all the values'.",
        "cut in_proj_weight into its three d_model-row blocks (queries, keys, values) and "
        "transpose each; split nothing by head here.",
    ),
    Misconception(
        "mha-scaled-input",
        "multi_head_attention",
        "Your multi_head_attention multiplies X by sqrt(d_model) before the projections (the "
        "scaling a Transformer applies to its token embeddings): the queries, keys and values "
        "all come out sqrt(d_model) times too large, the scores d_model times.",
        "That factor belongs to the embedding layer at the model's input, before any attention "
        "layer; multi-head attention projects X exactly as it is given.",
        "project X itself with Wq, Wk and Wv, unscaled, and leave any scaling of the "
        "embeddings to the code that calls multi_head_attention.",
    ),
    Misconception(
        "counts-always-bias",
        "parameter_counts",
        "Your parameter_counts counts the biases whatever `bias` says: with bias=False it still "
        "adds 4 * d_model (as a layer whose biases are on by default, Megatron's "
        "add_bias_linear, always has them).",
        "torch.nn.MultiheadAttention has biases only when it is built with bias=True: with "
        "bias=False it holds the four d_model x d_model matrices and nothing else.",
        "add the 4 * d_model biases only when bias is True (or count the parameters of a "
        "module built with the bias asked for).",
    ),
    Misconception(
        "adapter-float32-output",
        "cross_check",
        "Your cross_check rounds torch's output and weights to float32 (.float(), as llama's "
        "code returns output.float()) before taking the differences: on a float64 module the "
        "differences it reports are float32 rounding, not your pipeline's, and a right "
        "pipeline is reported as no match by a float64 tolerance.",
        "On a float64 module torch and a right NumPy pipeline agree to float64 rounding (about "
        "1e-15); rounding one side to float32 adds errors of about 1e-8 that are cross_check's "
        "own, and the contract asks for the pipeline's differences.",
        "compare in the module's own dtype: convert torch's results to float64 (or leave them "
        "as they are), never to float32.",
    ),
    Misconception(
        "attention-logit-softcap",
        "attention",
        "Your attention squashes the scores before the softmax (a cap on the logits: "
        "c * tanh(s / c), as Gemma 2's attn_logit_softcapping and Grok do, or a clip to "
        "[-c, c]): near the true scores where they are small, flattened where they are not, so "
        "the weights are too even wherever one key stands out.",
        "The weights are the softmax of the scaled scores Q Kᵀ / sqrt(d_k) themselves; a cap "
        "is a training device of some large models, not part of scaled dot-product attention, "
        "and it changes every row whose scores are not all small.",
        "take the softmax of Q Kᵀ / sqrt(d_k) as it is: no tanh, clip or other cap on the scores.",
    ),
    Misconception(
        "mha-logit-softcap",
        "multi_head_attention",
        "Your multi_head_attention squashes each head's scores before the softmax in its own "
        "code (a cap on the logits: c * tanh(s / c), as Gemma 2 does, or a clip to [-c, c]): "
        "near the true scores where they are small, flattened where they are not.",
        "Each head's weights are the softmax of its scaled scores Q Kᵀ / sqrt(d_head) "
        "themselves; a cap is a training device of some large models, not part of multi-head "
        "attention, and it changes every row whose scores are not all small.",
        "softmax each head's scaled scores as they are, with no cap (or call your attention "
        "on the split heads).",
    ),
    Misconception(
        "mha-rotary-embedding",
        "multi_head_attention",
        "Your multi_head_attention rotates each head's queries and keys by their token's "
        "position before the scores (rotary position embeddings, RoPE, as GPT-NeoX, GPT-J and "
        "LLaMA do inside their attention): the scores depend on where the tokens are, not only "
        "on what they are.",
        "The contract's multi-head attention uses no positions: each head's scores are the dot "
        "products of the projected queries and keys as they are, so that permuting the tokens "
        "of X only permutes the output; position information belongs to the model's "
        "embeddings, not to this module.",
        "split the projected queries and keys into heads and hand them to attention unrotated: "
        "no cos/sin tables, no rotate_half.",
    ),
    Misconception(
        "attention-expected-rank",
        "attention",
        "Your attention refuses inputs of some ranks (it raises for them) though it is right "
        "for the others: a check of its inputs' rank against a fixed list (BERT's "
        "get_shape_list(expected_rank=[3, 4]), an assert on ndim) or a fixed number of axes "
        "unpacked from a shape.",
        "attention must take a single 2-D head (n, d_k) and inputs with any number of leading "
        "batch or head axes; only the last two axes have a fixed meaning, so no rank needs to "
        "be refused.",
        "drop the rank check, and name only the last two axes, counting from the end (K "
        "transposed on its axes -1 and -2, d_k from the last axis of Q): that works for every "
        "rank.",
    ),
    Misconception(
        "scale-d-v",
        "attention",
        "Your attention divides the scores by the square root of the values' width "
        "(V.shape[-1], as GPT-2's rsqrt(v.shape[-1]) does) instead of sqrt(d_k): right only "
        "where d_v happens to equal d_k.",
        "The scale undoes the growth of a dot product of a query with a key with their "
        "length, d_k; the values never enter the scores, and their width d_v may differ from "
        "d_k.",
        "take the width from Q (or K): divide by sqrt(Q.shape[-1]).",
    ),
    Misconception(
        "counts-valueerror-unnamed",
        "parameter_counts",
        "Your parameter_counts raises ValueError for a head count that does not divide "
        "d_model, as it should, but its message does not name that head count.",
        "head_counts may hold several numbers; a message that names the one at fault tells the "
        "caller which to change (the contract asks for it).",
        "put the offending head count in the message, e.g. with an f-string.",
    ),
    Misconception(
        "mha-multi-query",
        "multi_head_attention",
        "Your multi_head_attention shares one key head and one value head among all the query "
        "heads (multi-query attention, as Falcon and PaLM do, or grouped-query attention with "
        "one group), made from one d_head-wide block of Wk and Wv: every head but that block's "
        "attends with another head's keys and values.",
        "The contract's multi-head attention gives every head its own keys and values: head h "
        "uses columns h*d_head:(h+1)*d_head of X @ Wk and X @ Wv, just as of X @ Wq; sharing "
        "them is a different (smaller) layer whose weights are not torch's.",
        "split X @ Wk and X @ Wv into num_heads heads exactly as the queries, and hand all "
        "three to attention.",
    ),
    Misconception(
        "counts-multi-query",
        "parameter_counts",
        "Your parameter_counts counts a multi-query layer: the keys and values one head wide "
        "(2 d_model^2 + 2 d_model^2 / h weights), so the count falls as the heads grow.",
        "torch.nn.MultiheadAttention keeps full-width key and value projections whatever the "
        "head count: the heads cut the projections into blocks, they do not shrink them.",
        "count 4 * d_model * d_model (+ 4 * d_model with bias) for every head count.",
    ),
    Misconception(
        "mha-alibi-bias",
        "multi_head_attention",
        "Your multi_head_attention adds a bias to each head's scores that depends on the key's "
        "position relative to the query (ALiBi, as BLOOM and MPT do, or a relative position "
        "bias, as T5 does) before the softmax: the weights depend on where the tokens are, not "
        "only on what they are.",
        "The contract's multi-head attention uses no positions: each head's weights are the "
        "softmax of Q Kᵀ / sqrt(d_head) with nothing added, so that permuting the tokens of X "
        "only permutes the output.",
        "softmax the scaled scores Q Kᵀ / sqrt(d_head) with no bias added, or call your "
        "attention for every head.",
    ),
    Misconception(
        "scale-wrong-factor",
        "attention",
        "Your attention scales the scores Q Kᵀ by another factor than 1/sqrt(d_k): an extra "
        "constant or temperature, a factor folded into the width (as DeBERTa's "
        "sqrt(d_k * scale_factor)), or a fixed number.",
        "The scale 1/sqrt(d_k) undoes the growth of a dot product of two d_k-wide vectors, so "
        "that the scores keep a spread near 1 whatever the width; any other factor makes every "
        "row of weights sharper or flatter than scaled dot-product attention's.",
        "divide the scores by the square root of the query/key width (the last axis of Q) and "
        "by nothing else: no extra factor, temperature or constant.",
    ),
    Misconception(
        "attention-masks-positions",
        "attention",
        "Your attention gives some keys a weight of exactly zero where every key should get "
        "some: it masks them (a band or sliding window, a triangle with another offset than a "
        "causal mask's, a stride, or another pattern).",
        "This attention attends every key: each query's weights are a softmax over all m "
        "keys. A mask belongs to a model that asks for one (a decoder, local attention), and "
        "the contract's attention is given none.",
        "take the softmax over all the scores as they are: no -inf or very negative value put "
        "into them, no window or mask.",
    ),
    Misconception(
        "mha-masks-positions",
        "multi_head_attention",
        "Your multi_head_attention gives some keys a weight of exactly zero in its heads where "
        "every key should get some: it masks them in its own code or in a mask it passes on "
        "(a band or sliding window as Longformer's and Mistral's, a triangle with another "
        "offset than a causal mask's, a stride, or another pattern).",
        "Every head of the contract's multi-head attention attends every token: each query's "
        "weights are a softmax over all n keys; local or windowed attention is another layer, "
        "not this one.",
        "softmax each head's scaled scores over all the keys, with no window or mask (or call "
        "your attention for every head).",
    ),
    Misconception(
        "attention-modifies-input",
        "attention",
        "Your attention changes an array it was given (Q, K or V) in place, for instance "
        "scaling Q with /= or *= on the caller's array: its results are right, but the "
        "caller's input is not what it was.",
        "The caller still owns its arrays and may use them again: a multi-head attention that "
        "reuses its queries, or a second call on the same Q, then gets other numbers. A name "
        "given to an argument is not a copy of it.",
        "do not modify the arrays you were given: make a new array (Q / a number, or scale the "
        "scores) instead of writing into Q.",
    ),
    Misconception(
        "softmax-modifies-input",
        "softmax",
        "Your softmax changes the array it was given in place (for instance x -= the maximum, "
        "or an exp written back into x): its result is right, but the caller's scores are not "
        "what they were.",
        "The caller still owns its array and may use it again (to show the scores, to take "
        "another softmax); a function that returns its result must leave its input alone.",
        "do not modify the array you were given: make a new array for the shifted scores and "
        "for their exponentials.",
    ),
    Misconception(
        "split-modifies-input",
        "split_heads",
        "Your split_heads changes the array it was given in place (for instance assigning to "
        "M.shape, which reshapes the caller's array itself): its result is right, but the "
        "caller's M is not what it was.",
        "The caller still owns M and uses it again (multi_head_attention splits the same "
        "projection's columns, a test compares it); a function that returns its result must "
        "leave its input alone.",
        "do not modify the array you were given: take a reshaped view or a new array of it "
        "instead of setting its shape.",
    ),
    Misconception(
        "mha-modifies-input",
        "multi_head_attention",
        "Your multi_head_attention changes an array it was given (X or a weight matrix) in "
        "place: its results are right, but the caller's inputs are not what they were.",
        "The caller still owns X and the weights and uses them again (the next layer, the "
        "next batch, a second call); a function that returns its result must leave its inputs "
        "alone.",
        "do not modify the arrays you were given: compute new arrays from them instead of "
        "writing into them.",
    ),
    Misconception(
        "counts-vary-with-heads",
        "parameter_counts",
        "Your parameter_counts gives a count that changes with the number of heads, and not "
        "by growing with it: it falls as the heads grow, or goes up and down (as a layer whose "
        "projections are d_head wide and shared by every head, 3 (d_model / h)^2 + d_model^2, "
        "would have).",
        "Multi-head attention projects Q, K and V once at full width before splitting them: "
        "torch.nn.MultiheadAttention holds four d_model x d_model matrices (and 4 * d_model "
        "biases with bias=True) whatever the number of heads; the heads cut the projections "
        "into slices, they neither add nor remove parameters.",
        "count 4 * d_model * d_model (+ 4 * d_model with bias) for every head count, or build "
        "the module and count its parameters.",
    ),
    Misconception(
        "counts-bias-when-false",
        "parameter_counts",
        "Your parameter_counts counts some biases with bias=False (one projection's bias "
        "always, as ViT's always-biased output projection beside biases for q, k and v that "
        "follow the flag), though it is right with bias=True.",
        "With bias=False torch.nn.MultiheadAttention has no bias at all, the output "
        "projection's included: it holds the four d_model x d_model matrices and nothing else.",
        "add the 4 * d_model biases only when bias is True, every one of them, and none when it "
        "is False.",
    ),
    Misconception(
        "pairs-ignores-atol",
        "distinct_head_pairs",
        "Your distinct_head_pairs ignores the atol it is given: it compares the heads with a "
        "tolerance of its own (a fixed number, as minitorch's is_close with 1e-2, isclose's "
        "defaults, or exact equality), so the pairs it lists do not change when atol does.",
        "atol is the caller's choice of how far apart two heads' weights must be to count as "
        "different patterns: heads closer than your constant but farther than atol are called "
        "the same (or, for a constant below atol, the reverse).",
        "compare with the atol passed in: a pair is distinct when the largest absolute "
        "difference of the two heads' weights is above atol.",
    ),
    Misconception(
        "attention-operand-layout",
        "attention",
        "Your attention takes an operand in another layout than the one it is given: it "
        "computes the scores as another product of Q, K and their transposes than Q Kᵀ (Q @ K, "
        "treating K as already transposed, as minitorch's self_attention(q, kT, v) expects), "
        "or transposes another operand, which runs only where the shapes are square.",
        "attention is given the keys as (..., m, d_k), one row per key, like the queries: each "
        "score is the dot product of a query row with a key row, Q Kᵀ, which is (..., n, m) "
        "whatever the sizes. A product of other layouts pairs features with positions, and "
        "where the shapes happen to fit it gives other numbers.",
        "take Q, K and V as the contract gives them and transpose K inside, on its last two "
        "axes; if your caller hands you pre-transposed keys, change the caller.",
    ),
    Misconception(
        "attention-output-query-width",
        "attention",
        "Your attention raises whenever the values are not as wide as the queries (d_v != d_k) "
        "and is right where they are: it builds its output in the queries' shape "
        "(zeros_like(Q), Chollet's zeros(shape=input_sequence.shape)) or otherwise ties "
        "the output's width to d_k.",
        "The output is the weights times V: one row per query, each as wide as a row of V, "
        "(..., n, d_v). The values' width need not be the queries' (cross-attention, or a "
        "value projection of another size).",
        "make the output from the values: weights @ V, or an array of shape Q.shape[:-1] + "
        "(V.shape[-1],).",
    ),
    Misconception(
        "attention-weights-layout",
        "attention",
        "Your attention returns its weights with their axes in another order than the "
        "contract's (..., n, m): the right weights transposed, one column per query and one "
        "row per key (the convention of a book that writes tokens as columns, softmax over "
        "each column).",
        "The contract's weights have one row per query and one column per key, the same "
        "layout as the scores Q Kᵀ: row i is query i's distribution over the keys. Callers, "
        "and torch's attn_output_weights, read them that way; transposed, each row mixes "
        "the keys' weights for different queries.",
        "hand back the weights as (..., n, m), queries on the second-to-last axis and keys on the "
        "last; if you compute them keys-first, swap the last two axes before returning them.",
    ),
    Misconception(
        "counts-extra-terms",
        "parameter_counts",
        "Your parameter_counts gives the module's count plus (or minus) a few terms of its "
        "own: a LayerNorm's weight and bias, a parameter per head (as Swin V2's logit_scale), "
        "a bias left out, each the same simple formula in d_model and the number of heads for "
        "every input.",
        "The question counts torch.nn.MultiheadAttention alone: four d_model x d_model "
        "matrices, and 4 * d_model biases with bias=True, nothing per head. A LayerNorm, a "
        "learned temperature or any other layer around attention is not part of it.",
        "count only the four projections and, with bias=True, their four biases; leave out the "
        "parameters of any layer your model puts around attention.",
    ),
    Misconception(
        "mha-transforms-input",
        "multi_head_attention",
        "Your multi_head_attention transforms X before the projections (a LayerNorm of each "
        "token, as a pre-norm block or Perceiver's attention does, an RMSNorm, a "
        "standardisation or a rescaling): its results are the right layer's on the "
        "transformed X, not on X.",
        "A normalisation in front of attention belongs to the block around it (the "
        "Transformer layer's pre-norm), with weights of its own; multi-head attention itself "
        "projects X exactly as it is given, and torch's module does nothing else to it.",
        "project X itself with Wq, Wk and Wv, and leave any normalisation to the code that "
        "calls multi_head_attention.",
    ),
    Misconception(
        "report-relative-difference",
        "cross_check",
        "Your cross_check reports a relative error where the largest absolute difference "
        "belongs: output_max_abs_diff and weights_max_abs_diff are the differences divided by "
        "the size of the results (as a course notebook's rel_error, 'should be less than "
        "1e-5'), not the largest absolute difference of an entry.",
        "The contract's report is absolute: the largest absolute difference between your "
        "pipeline's output (and weights) and torch's, entry by entry. A relative error is "
        "another number, smaller or larger by the size of the results, and a tolerance chosen "
        "for one does not fit the other.",
        "report the maximum over the entries of the absolute difference of the two arrays, "
        "divided by nothing, and decide match from those two numbers.",
    ),
    Misconception(
        "attention-cosine-scores",
        "attention",
        "Your attention scores each query against each key by their cosine times a factor (Q "
        "and K scaled to unit length first, as Swin Transformer V2's cosine attention with "
        "its exp(logit_scale)), not by the scaled dot product.",
        "Scaled dot-product attention compares the queries and keys as they are: their lengths "
        "are part of the score, and the only factor is 1/sqrt(d_k). Cosine scores lie in "
        "[-1, 1] whatever the vectors, so with a fixed factor every row of weights comes out "
        "sharper or flatter than torch's, and on other inputs differently so.",
        "compute the scores as Q Kᵀ / sqrt(d_k) from Q and K as they are given: no "
        "normalisation of the rows and no learned or fixed temperature.",
    ),
    Misconception(
        "mha-weights-misassigned",
        "multi_head_attention",
        "Your multi_head_attention uses one of the four weight matrices where another belongs, "
        "or transposed: its results are those of the right layer with some of Wq, Wk, Wv and "
        "Wo replaced (Reformer's shared query-key projection, X @ Wq for the keys as well, "
        "never using Wk, is one such).",
        "Each matrix has one role: the queries are X @ Wq, the keys X @ Wk, the values X @ Wv, "
        "and the merged heads are projected by Wo, each used as given (x @ W, no transpose). "
        "With another matrix in a role the heads compare or mix other vectors than the layer "
        "torch builds from the same weights.",
        "use each matrix in its own place: Q = X @ Wq, K = X @ Wk, V = X @ Wv, and merge_heads("
        "...) @ Wo, with no transpose and no matrix used twice.",
    ),
    Misconception(
        "attention-rows-not-normalised",
        "attention",
        "Your attention returns weights whose rows do not sum to 1: each query's row is the right "
        "softmax times a factor of its own (what an extra logit joined to the scores for the "
        'softmax and dropped after it gives, as an attention sink or a "softmax plus one", or '
        "exp never divided by its sum), and the output is those weights times V.",
        "The contract's weights are, for every query, a probability distribution over the real "
        "keys: the softmax of its scores alone, so that the row sums to 1 and the output is a "
        "weighted average of the values. A logit that joins the softmax and is dropped takes "
        "part of that mass away, so the weights and the output shrink with it; torch's module "
        "has no such term.",
        "take the softmax of the scaled scores Q Kᵀ / sqrt(d_k) over the keys only, with nothing "
        "added to its denominator, and check that every row of weights sums to 1.",
    ),
    Misconception(
        "mha-rows-not-normalised",
        "multi_head_attention",
        "Your multi_head_attention's heads attend with weights whose rows do not sum to 1: each "
        "row is the right softmax times a factor of its own (an extra logit per head joined to "
        "the scores for the softmax and dropped after it, as gpt-oss's attention sinks or a "
        '"softmax plus one", in its own code or passed to attention), and the output follows '
        "those weights.",
        "Multi-head attention's heads each take a softmax over the real keys: every row of "
        "weights is a probability distribution that sums to 1. A sink's logit takes part of "
        "that mass away and shrinks the output with it; torch.nn.MultiheadAttention has no "
        "sinks and no extra logit.",
        "hand attention the split queries, keys and values alone (no sink or extra logit), so "
        "that every head's rows of weights sum to 1.",
    ),
    Misconception(
        "mha-grouped-query",
        "multi_head_attention",
        "Your multi_head_attention shares key and value heads among groups of query heads "
        "(grouped-query attention, as Llama 2, Mistral and Qwen2's num_key_value_heads with "
        "repeat_kv): it builds fewer key/value heads than query heads from only some d_head-wide "
        "blocks of Wk and Wv, and the query heads of a group attend with the same keys and "
        "values.",
        "The contract's multi-head attention gives every head its own keys and values: head h "
        "uses columns h*d_head:(h+1)*d_head of X @ Wk and X @ Wv, just as of X @ Wq. Sharing "
        "them among groups is a different (smaller) layer whose weights are not torch's, and "
        "the other columns of Wk and Wv go unused.",
        "split all of X @ Wk and X @ Wv into num_heads heads exactly as the queries, and hand "
        "all three to attention.",
    ),
    Misconception(
        "mha-transforms-projections",
        "multi_head_attention",
        "Your multi_head_attention transforms the projected queries, keys or values before "
        "attention: an activation on them (a ReLU, as dense layers with activation=relu give; a "
        "GELU, tanh; a clip to [-c, c] or a soft cap where they are large, as clip_qkv does) or "
        "a normalisation (an RMSNorm or LayerNorm of each head's queries and "
        "keys, as QK-norm does, or a scaling to unit length): its results are the right "
        "layer's with that transform in between.",
        "Multi-head attention's projections are linear and used as they come: Q = X @ Wq, "
        "K = X @ Wk, V = X @ Wv. An activation clips or bends them, and a normalisation throws "
        "away the vectors' lengths (the scores become a scaled cosine); torch's module does "
        "neither.",
        "attend with X @ Wq, X @ Wk and X @ Wv as they are, split into heads: no activation, "
        "no clipping and no normalisation between the projections and the scores.",
    ),
    Misconception(
        "mha-narrow-projections",
        "multi_head_attention",
        "Your multi_head_attention projects to a narrower width than d_model: it uses only the "
        "first columns of the projections (as Segment Anything's attention with internal_dim = "
        "d_model // downsample_rate does), so every head is narrower than d_head and the rest "
        "of the weights is never used.",
        "The contract's heads together span the whole projection: d_head = d_model / num_heads, "
        "each head using its own d_head columns of X @ Wq, X @ Wk and X @ Wv, and Wo mapping "
        "all d_model merged features back. A bottleneck width is another (smaller) layer than "
        "torch's.",
        "project with all d_model columns of Wq, Wk and Wv, split into heads of d_model // "
        "num_heads, and apply all of Wo.",
    ),
    Misconception(
        "adapter-rounded-weights",
        "weights_from_torch",
        "Your weights_from_torch returns float64 arrays whose values went through a lower "
        "precision on the way (float32, as .float() or a state dict moved to float32 before "
        "the conversion to float64 gives; float16 or bfloat16): the dtype asked for, without the "
        "module's precision.",
        "A float64 module's weights hold about 16 significant digits; rounded to float32 they "
        "keep about 7, so a pipeline built from them cannot reproduce the module to float64 "
        "precision, and a cross-check measures the rounding instead of the pipeline. The dtype "
        "does not show it: the arrays are float64.",
        "convert each weight straight to float64 (detach it, then .double() or .to("
        "torch.float64)), with no lower-precision step in between.",
    ),
    Misconception(
        "adapter-loose-tolerance",
        "cross_check",
        "Your cross_check reports match=True for a float64 module although its pipeline's output "
        "really differs from the module's by more than 1e-3 of the output's size: its tolerance "
        "is far looser than float64 needs (one fit for bfloat16 or float16, as kernel tests "
        "use).",
        "float64 keeps about 16 significant digits, so a right pipeline agrees with a float64 "
        "module to about 1e-12 of the output's size; a difference above 1e-3 is a mistake in "
        "the pipeline, not rounding, and a cross-check that calls it a match hides it.",
        "choose the tolerance from the module's dtype, relative to the output's scale: for "
        "float64 at most 1e-3 (1e-8 leaves ample room for rounding), for float32 about 1e-4.",
    ),
    Misconception(
        "mha-smoothed-weights",
        "multi_head_attention",
        "Your multi_head_attention returns attention weights that are a transform of the right "
        "ones: mixed with the uniform distribution ((1 - e) w + e / n, a smoothing 'to avoid "
        "NaNs' in later logs) or sharpened or flattened by a power (a temperature on the "
        "weights alone).",
        "The weights returned are the ones the heads attended with: the softmax of each head's "
        "scaled scores, as torch's module returns them. A smoothed copy looks like them (rows "
        "still sum to 1) but every entry is off, and anything that reads the weights (a check "
        "against torch, head comparisons) sees weights no head used.",
        "hand back each head's softmax weights exactly as attention gave them; smooth a copy "
        "only where a log needs it, in the analysis code.",
    ),
    Misconception(
        "mha-grouped-projections",
        "multi_head_attention",
        "Your multi_head_attention projects through only part of each weight matrix: blocks on "
        "the diagonal of Wq, Wk or Wv (grouped projections, as SqueezeBERT's grouped 1x1 "
        "convolutions give, or each head's queries from its own slice of X), so every other "
        "entry is never used.",
        "In multi-head attention every head's queries, keys and values are combinations of all "
        "d_model features of each token: Q = X @ Wq with the whole matrix, and only the split "
        "into heads comes after. A grouped projection lets each head see a fraction of the "
        "token.",
        "multiply X by the whole matrices (X @ Wq, X @ Wk, X @ Wv, then @ Wo), and split the "
        "results into heads afterwards.",
    ),
    Misconception(
        "attention-not-softmax",
        "attention",
        "Your attention's weights are not a softmax of the scaled scores: they are a kernel's "
        "values normalised per query (a feature map such as elu(x) + 1 or relu on the queries "
        "and keys, as linear attention uses, or the dot products themselves divided by their "
        "sum), with no exp.",
        "Scaled dot-product attention weights each key by exp(q . k / sqrt(d_k)), normalised "
        "over the keys: a softmax. Rows that sum to 1 and are positive are not enough; a kernel "
        "without exp weights the keys differently on every input (linear attention computes "
        "another attention, not a faster softmax).",
        "compute weights = softmax(Q Kᵀ / sqrt(d_k)) over the keys and out = weights @ V.",
    ),
    Misconception(
        "pairs-another-distance",
        "distinct_head_pairs",
        "Your distinct_head_pairs compares two heads by a distance of its own (a divergence "
        "such as Jensen-Shannon or KL, a norm of the difference, a mean absolute difference) "
        "against atol, instead of by their largest entry difference.",
        "Two heads are distinct when some entry of their weights differs by more than atol. A "
        "divergence or a sum over many entries is another quantity: small gaps count far less "
        "(a divergence is second order in them) or add up over the tokens, so heads a little "
        "more than atol apart are called the same, or heads within atol everywhere distinct.",
        "call two heads distinct when the largest absolute difference between an entry of one "
        "and the same entry of the other is above atol.",
    ),
    Misconception(
        "softmax-temperature",
        "softmax",
        "Your softmax returns the softmax of its input times a constant, not of the input "
        "itself (a temperature inside softmax, or another base: 2**x in place of e**x is the "
        "softmax of x times ln 2).",
        "softmax(x) = exp(x - max) / sum along the axis: base e and the input as it comes. A "
        "factor inside makes every row flatter (a factor below 1) or sharper (above 1) though "
        "the rows still sum to 1; a caller that scales its own scores to make up for it "
        "computes another softmax than the contract's.",
        "exponentiate with base e the input minus its maximum along the axis, with no "
        "factor, and divide by the sum along that axis.",
    ),
    Misconception(
        "attention-sparse-weights",
        "attention",
        "Your attention's weights are a distribution over the keys for each query that follows "
        "the order of the scaled scores, but not their softmax: some keys get exactly zero "
        "weight (a sparse map such as sparsemax or entmax, which cut every key below a "
        "threshold).",
        "The softmax gives every key a positive weight, exp of its scaled score over the sum: "
        "no key is ever cut. A sparse map is another attention mechanism; its weights differ "
        "from the softmax's on essentially every input, zero or not, and so does the output.",
        "compute weights = softmax(Q Kᵀ / sqrt(d_k)) over the keys and out = weights @ V.",
    ),
    Misconception(
        "mha-activated-scores",
        "multi_head_attention",
        "Your multi_head_attention passes each head's scores through a function before the "
        "softmax (an activation such as GAT's LeakyReLU, a ReLU or an ELU): the weights are "
        "the softmax of the changed scores.",
        "Each head's weights are the softmax of its scaled scores as they are, Q Kᵀ / "
        "sqrt(d_head): the softmax already turns any score into a positive weight. A function "
        "in between changes how the keys are weighed (a LeakyReLU shrinks the negative scores, "
        "so the low-scoring keys get more weight), and torch's module has none.",
        "softmax each head's scaled scores Q Kᵀ / sqrt(d_head) with nothing applied to them first.",
    ),
    Misconception(
        "mha-activated-head-outputs",
        "multi_head_attention",
        "Your multi_head_attention passes each head's output (its weights times V) through a "
        "function before the heads are merged (an activation such as GAT's ELU on each head, "
        "a ReLU or a GELU).",
        "After the softmax, multi-head attention is linear: each head's output is its weights "
        "times V, the heads are concatenated as they are and projected with Wo. A function on "
        "the heads' outputs changes the output wherever a head's output is negative (on "
        "essentially every input), even with the right weights; torch's module has none.",
        "merge the heads' outputs weights @ V as they are, then project with Wo.",
    ),
    Misconception(
        "pairs-argmax",
        "distinct_head_pairs",
        "Your distinct_head_pairs compares two heads by each query's most-attended key (the "
        "argmax of each row of weights) instead of by the weights themselves: heads whose "
        "weights differ a lot but agree on every row's largest entry are called the same, and "
        "heads whose near-tied rows break differently are called distinct, whatever atol is.",
        "Two heads are distinct when some entry of their weights differs by more than atol: "
        "the whole pattern counts, not only where each row peaks, and atol decides how close "
        "is the same.",
        "call two heads distinct when the largest absolute difference between an entry of one "
        "and the same entry of the other is above atol.",
    ),
    Misconception(
        "attention-scores-not-dot-product",
        "attention",
        "Your attention's weights are a distribution over the keys for each query, but they "
        "do not come from the dot products of the queries and keys: two keys with the same "
        "dot product with a query get different weights (an additive score as Bahdanau's "
        "v . tanh(W q + U k), a distance, or another comparison of q and k).",
        "Scaled dot-product attention scores each key by q . k / sqrt(d_k) alone and weighs "
        "it by the softmax of those scores: keys with the same dot product with a query get "
        "the same weight. Another score function is another attention mechanism, with weights "
        "and an output that differ on essentially every input.",
        "score with the dot products, scores = Q Kᵀ / sqrt(d_k), then take their softmax over "
        "the keys and multiply by V.",
    ),
    Misconception(
        "mha-depends-on-positions",
        "multi_head_attention",
        "Your multi_head_attention's results depend on the tokens' positions: reordering the "
        "tokens of X does not just reorder its output and weights (a position embedding added "
        "to the input of some projections, as DETR's with_pos_embed does for the queries and "
        "keys, or a bias or mask by position of another kind).",
        "Multi-head attention has no notion of order: each token's output depends on the set "
        "of tokens, not on where they stand, so reordering X reorders the output's rows and "
        "the weights' rows and columns the same way. Position information, where a model "
        "wants it, is added to the embeddings before the layer, not inside it.",
        "project X itself for the queries, keys and values, with nothing that depends on a "
        "token's index, and check that permuting X's rows permutes the output's rows.",
    ),
    Misconception(
        "report-not-own-pipeline",
        "cross_check",
        "Your cross_check reports the differences of another pipeline than yours: where your "
        "multi_head_attention really differs from the module, it reports the differences of a "
        "right pipeline (one it computes itself, or the reference's) instead of your own "
        "pipeline's.",
        "cross_check is there to measure your own pipeline against torch: its report must be "
        "what your multi_head_attention, given weights_from_torch's weights, really gives. A "
        "report of another pipeline says nothing about yours, and calls it a match where it is "
        "not one.",
        "run X through your own multi_head_attention with the weights weights_from_torch gives, "
        "and report the differences of that result from the module's.",
    ),
    Misconception(
        "report-not-plain-floats",
        "cross_check",
        "Your cross_check returns a report whose values are not plain Python floats and a bool: "
        "output_max_abs_diff, weights_max_abs_diff or match is another kind of object (a torch "
        "tensor, a 0-d array, ...), which the grader does not take as a number.",
        "The report is plain data: two floats and a bool. A torch tensor (even one with a "
        "single entry, as .abs().max() gives) is not a float; it also keeps torch's dtype and "
        "device with it, and comparisons with it give tensors, not bools.",
        "turn each difference into a float with float(...) or .item(), and match into a bool "
        "with bool(...), before putting them in the dict.",
    ),
    Misconception(
        "adapter-masked-module-call",
        "cross_check",
        "Your cross_check calls the torch module with a mask of its own (a "
        "key_padding_mask marking the tokens whose features are all 0 as padding, as "
        "AllenNLP's get_text_field_mask gives; an attn_mask or is_causal): on the "
        "inputs where the mask masks anything, the differences it reports are to "
        "another computation than the module's.",
        "X's rows are all real tokens, whatever their values: the module computes "
        "with every key, and the contract asks for the differences to what the module "
        "gives when it is called plainly. A mask of cross_check's own changes torch's "
        "side of the comparison, so a pipeline that masks the same way is reported as "
        "a match where it really differs.",
        "call the module as mha(x, x, x, need_weights=True, "
        "average_attn_weights=False), with no mask of any kind.",
    ),
    Misconception(
        "attention-lower-precision",
        "attention",
        "Your attention computes its products in a lower precision (float16, as a "
        "compute_dtype or an autocast habit gives) and casts back: its weights and "
        "output are off from the right ones by that precision's rounding, more than "
        "float32's precision allows.",
        "float16 keeps about 3 significant digits (its steps are about 1e-3 of a "
        "value), so scores and weights @ V computed in it are off by about 1e-3 of "
        "their size, and its largest value is 65504, past which it overflows. The "
        "contract compares results to 1e-4 of their size.",
        "keep the input's dtype (float64, or float32 at least) for both matrix "
        "products and the softmax.",
    ),
    Misconception(
        "mha-activated-output",
        "multi_head_attention",
        "Your multi_head_attention passes its output, after the projection with Wo, "
        "through an elementwise function (an activation such as keras-multi-head's "
        "default ReLU): the output is clipped or bent.",
        "Multi-head attention ends with the linear projection merged @ Wo and nothing "
        "after it: an activation there changes the output wherever an entry is "
        "negative (on essentially every input), whatever the weights; torch's module "
        "has none.",
        "use merge_heads(out) @ Wo as the output as it is, with no activation after it (nor on "
        "the projections of X).",
    ),
    Misconception(
        "pairs-not-list-of-tuples",
        "distinct_head_pairs",
        "Your distinct_head_pairs returns the right pairs in another container than a "
        "list of (i, j) tuples (an array of pairs, as NumPy's argwhere gives; a list of "
        "arrays or of lists).",
        "The contract asks for a list of tuples: a caller compares it with ==, tests "
        "membership with (i, j) in pairs and joins it with other lists, and a NumPy "
        "array does none of these as a list does (== compares entry by entry).",
        "turn the pairs into a list of tuples of ints: one (int(i), int(j)) per pair, "
        "in lexicographic order.",
    ),
    Misconception(
        "counts-iterates-twice",
        "parameter_counts",
        "Your parameter_counts goes over head_counts more than once (a pass that "
        "checks every head count, then one that counts): right for a list or a tuple, "
        "but a generator is used up by the first pass, and the result is empty or "
        "partial.",
        "The contract allows any iterable of head counts, a generator included; a "
        "generator can be read only once, so a second loop over it sees nothing.",
        "turn head_counts into a list first (head_counts = list(head_counts)), or "
        "check and count in one loop.",
    ),
]

# A catalogued mistake made in another function than the one its entry names, in words for
# that function: (id, function) -> the entry as said there. The id is the same (the same
# mistake); only the words follow the function where it was made.
ELSEWHERE: dict[tuple[str, str], Misconception] = {
    ("adapter-no-detach", "weights_from_torch"): Misconception(
        "adapter-no-detach",
        "weights_from_torch",
        "Your weights_from_torch raises RuntimeError: it takes NumPy arrays out of the "
        "module's parameters (in_proj_weight, the output projection's weight), tensors that "
        "require gradients.",
        "A module's parameters are what backpropagation trains, so torch tracks them; outside "
        "torch's no_grad context it refuses to hand such a tensor to NumPy before it is "
        "detached from that tracking.",
        "detach each weight before converting it to NumPy.",
    ),
}

CATALOGUE: dict[str, Misconception] = {m.id: m for m in _ENTRIES}

# Ids the contract fixes (§6); the rest are this project's additions (docs/instructors.md).
ADDED_IDS: tuple[str, ...] = (
    "adapter-strict-tolerance",
    "pairs-relative-tolerance",
    "scale-inverted",
    "attention-scores-kq",
    "attention-fixed-rank",
    "attention-causal-mask",
    "mha-causal-mask",
    "mha-qk-swapped",
    "mha-averaged-weights",
    "mha-qkv-interleaved",
    "mha-no-valueerror",
    "split-no-valueerror",
    "adapter-float32-weights",
    "adapter-no-valueerror",
    "adapter-no-detach",
    "counts-ignore-bias",
    "counts-no-valueerror",
    "scale-seq-len",
    "attention-dropout",
    "mha-dropout",
    "mha-last-head-weights",
    "adapter-fixed-dtype",
    "counts-wide-heads",
    "softmax-global-max",
    "mha-residual-norm",
    "mha-prescaled-query",
    "split-heads-second-axis",
    "merge-heads-second-axis",
    "attention-returns-scores",
    "mha-first-head-weights",
    "counts-bias-partial",
    "adapter-qkv-interleaved",
    "mha-scaled-input",
    "counts-always-bias",
    "adapter-float32-output",
    "attention-logit-softcap",
    "mha-logit-softcap",
    "mha-rotary-embedding",
    "attention-expected-rank",
    "scale-d-v",
    "counts-valueerror-unnamed",
    "mha-multi-query",
    "counts-multi-query",
    "mha-alibi-bias",
    "scale-wrong-factor",
    "attention-masks-positions",
    "mha-masks-positions",
    "attention-modifies-input",
    "softmax-modifies-input",
    "mha-modifies-input",
    "split-modifies-input",
    "counts-vary-with-heads",
    "counts-bias-when-false",
    "pairs-ignores-atol",
    "attention-operand-layout",
    "attention-output-query-width",
    "mha-weights-misassigned",
    "attention-weights-layout",
    "counts-extra-terms",
    "mha-transforms-input",
    "report-relative-difference",
    "attention-cosine-scores",
    "attention-rows-not-normalised",
    "mha-rows-not-normalised",
    "mha-grouped-query",
    "mha-transforms-projections",
    "mha-narrow-projections",
    "adapter-rounded-weights",
    "adapter-loose-tolerance",
    "mha-smoothed-weights",
    "mha-grouped-projections",
    "attention-not-softmax",
    "pairs-another-distance",
    "softmax-temperature",
    "attention-sparse-weights",
    "mha-activated-scores",
    "mha-activated-head-outputs",
    "pairs-argmax",
    "attention-scores-not-dot-product",
    "mha-depends-on-positions",
    "report-not-own-pipeline",
    "report-not-plain-floats",
    "adapter-masked-module-call",
    "attention-lower-precision",
    "mha-activated-output",
    "pairs-not-list-of-tuples",
    "counts-iterates-twice",
)
CONTRACT_IDS: tuple[str, ...] = tuple(i for i in CATALOGUE if i not in ADDED_IDS)
