// Package bench measures testfirst outside production: the sealed grade
// against bare pytest (testfirst bench grade) and the webhook intake under
// load (testfirst bench intake), with the raw SQL connections that count
// what a run recorded. Only the command line uses it.
package bench
