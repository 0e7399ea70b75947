// Package egress is the only way out of a sandbox that needs the package
// index: an allowlist HTTP proxy, with CONNECT for https, that the
// testfirst process serves on a unix socket. The socket is mounted into the
// container, where the wrapper relays 127.0.0.1:3128 to it, so the
// container keeps network mode none and no address but loopback is used.
// Only the sandbox's uid may connect to the socket (WithPeerUIDs): its
// directory is the service's alone and each peer's uid is checked.
//
// Every request is logged (host, method, path, status, bytes). A proxy in
// read-only mode forwards GET and HEAD only and refuses CONNECT, whose
// tunnelled requests it could not see: it is what a grade with
// `network: mirror` reaches.
package egress
