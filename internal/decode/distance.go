package decode

// EditDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and adjacent transpositions, in
// bytes): the measure of Suggest, for the "did you mean" of names other
// than keys (tools, agents, prompts).
func EditDistance(a, b string) int { return editDistance(a, b) }
