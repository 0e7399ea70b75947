// Package fakegithub is a stateful, in-memory fake of the GitHub REST API for
// tests of the testfirst GitHub App.
//
// [New] starts an [httptest.Server] that speaks GitHub's real paths, status
// codes, headers and JSON field names for the calls testfirst makes: app
// authentication with RS256 JWTs, installation access tokens, repositories,
// branches, refs, contents, tarballs (through a codeload-style redirect), check
// runs, issues, issue comments, labels, pull requests, collaborator
// permissions, the app's webhook delivery log and app-manifest conversions
// ([Server.RegisterManifest] plays GitHub's web side of the manifest flow).
// It also plays github.com for the OAuth web flow of the app's sign-in
// ([Server.SignInWeb], [Server.WebURL]): the authorize page, the one-use code
// exchange and GET /user with the user access token.
//
// Tests seed the fake ([Server.AddInstallation], [Server.AddRepo],
// [Server.Commit], [Server.AddPull], …), point a real client at
// [Server.URL], and then read back what the app did ([Server.CheckRuns],
// [Server.Comments], [Server.IssueLabels], [Server.Requests], …).
// [Server.FailNext] injects GitHub-shaped failures (5xx, primary and
// secondary rate limits).
//
// Two clocks are involved, as with the real service. The fake's clock
// ([Server.SetClock]) is GitHub's: it stamps created objects, runs the
// rate-limit windows and decides when installation tokens and archive links
// expire. App JWTs are checked against the wall clock, because clients sign
// them with their own wall clock (ghinstallation does), so moving the fake
// clock never locks an app out of minting new tokens.
package fakegithub
