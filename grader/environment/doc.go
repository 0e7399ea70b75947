// Package environment gives a grade the third-party packages its base
// tree declares: it reads the declarations (requirements files,
// pyproject.toml, setup.cfg), builds them once with Debian's pip in a
// sandbox whose only way out is the egress proxy, and commits the result
// as an image named by a hash of what went into it. Later grades of the
// same base reuse the image; concurrent grades of a new one build it once.
//
// It holds no engine and no HTTP: the caller gives it a Builder (the Docker
// adapter) and the host path of the egress proxy's socket.
package environment
