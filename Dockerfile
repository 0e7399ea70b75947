# The testfirst service as a container image: `make docker`.
#
#   docker build -t testfirst .
#   docker build --build-arg GO_IMAGE=my-local-go-image -t testfirst .
#
# GO_IMAGE is the build stage's base: any Debian-like image with Go 1.26 in
# /usr/local/go (or on PATH), a POSIX shell and /etc/ssl/certs/ca-certificates.crt.
# The default needs an image registry; a machine without one passes a local
# image (test/dockerfile_test.go builds one from the grader's Debian base).
# The runtime stage is FROM scratch, so nothing else is pulled.
#
# Modules come from the module proxy (GOPROXY may be passed as a build arg),
# unless the build context holds vendor/ (`go mod vendor`): then nothing is
# downloaded and the build works offline.
#
# Written for the legacy builder (Docker 20.10 without buildx) and BuildKit
# alike; no `# syntax=` line, so no frontend image is pulled either.
#
# What the container needs at run time (the Docker engine, the grader image,
# keys and credentials) is in the README, "Container image".

ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
ENV CGO_ENABLED=0 GOTOOLCHAIN=local PATH=/usr/local/go/bin:$PATH
WORKDIR /src
ARG GOPROXY
# vendor/modules.tx[t] matches nothing without vendor/: then this layer,
# cached on go.mod and go.sum, downloads the modules.
COPY go.mod go.sum vendor/modules.tx[t] ./
RUN if [ -f modules.txt ]; then \
		echo "vendor/ in the build context: no module download"; rm modules.txt; \
	else \
		go mod download; \
	fi
COPY . .
# Both binaries static (SQLite is modernc, pure Go), built as `make build` does.
RUN go build -trimpath -o /out/bin/ ./cmd/testfirst ./cmd/testfirst-wrapper
# The runtime's file system: CA certificates (the app calls GitHub over
# HTTPS), a user without privileges, a writable /tmp and working directory.
RUN set -e; \
	if [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then \
		echo "GO_IMAGE has no /etc/ssl/certs/ca-certificates.crt: use an image with Debian's ca-certificates installed" >&2; exit 1; \
	fi; \
	mkdir -p /out/root/etc/ssl/certs /out/root/tmp /out/work/var; \
	cp /etc/ssl/certs/ca-certificates.crt /out/root/etc/ssl/certs/; \
	chmod 1777 /out/root/tmp; \
	printf 'root:x:0:0:root:/root:/sbin/nologin\ntestfirst:x:65532:65532:testfirst:/srv/testfirst:/sbin/nologin\n' >/out/root/etc/passwd; \
	printf 'root:x:0:\ntestfirst:x:65532:\n' >/out/root/etc/group

FROM scratch
COPY --from=build /out/root/ /
COPY --from=build --chown=65532:65532 /out/work/ /srv/testfirst/
COPY --from=build /out/bin/ /usr/local/bin/
# Relative defaults (var/testfirst.db, var/hidden, the keys) land in
# /srv/testfirst/var: mount a volume there, or point TESTFIRST_* elsewhere.
WORKDIR /srv/testfirst
ENV PATH=/usr/local/bin \
	TESTFIRST_WRAPPER=/usr/local/bin/testfirst-wrapper \
	TESTFIRST_LISTEN=:8080
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["testfirst"]
CMD ["serve"]
