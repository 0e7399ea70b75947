// Package pasted finds hidden tests pasted into text without their canary:
// an issue body or comment, a pull request's description or review, the
// task an implementer agent is given. The approval card shows the hidden
// tests with the canary masked, so a copy made from it carries no token
// for the canary scan to find.
//
// Python source is read by a tolerant lexer (any text is accepted:
// markdown, a traceback, half a function) into tokens, and normalised:
// comments, docstrings, whitespace, line breaks, markdown quoting and
// fences, doctest prompts and trailing commas go; every plain name
// (variables, functions, parameters, imported names) becomes one
// placeholder, while keywords, operators, builtins, attribute names (the
// library's API, which a rename cannot change) and literals (quote style
// and prefix normalised) are kept. Runs of K normalised tokens (shingles)
// of each hidden test are compared with those of the text. Only what is
// new in the hidden tests counts: a shingle that also occurs anywhere in
// the base tree (a hidden file that edits an existing test file carries
// the base's public lines) never matches, so quoting the repository's own
// tests is honest. Why these choices, and what they find and miss on real
// repositories, is measured in docs/pasted-tests.md.
//
// It is a leaf: it reads bytes and strings, and says which hidden file and
// test matched, how much of it, and on which lines of the text.
package pasted
