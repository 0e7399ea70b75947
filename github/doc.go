// Package github is the only place testfirst speaks GitHub: webhook
// signature verification, app authentication and registration from a
// manifest, cached installation clients, OAuth sign-in, check runs,
// comments, labels, file contents and tarballs.
//
// It converts go-github's types into small structs at the edge; nothing
// outside this package sees a go-github type. Errors are classified: a
// *APIError says whether retrying can help and how long to wait, so the job
// system retries rate limits and server errors and stops on the rest.
package github
