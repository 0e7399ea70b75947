#!/usr/bin/env bash
# kube-local.sh: a real single-node Kubernetes on this machine, for
# make test-kube. etcd, containerd, runc and the CNI plugins are Debian's
# packages; kube-apiserver, kube-controller-manager, kube-scheduler, kubelet
# and kubectl are built from k8s.io/kubernetes through the Go module proxy
# and kept under $KUBE_DIR/bin by version. No image registry: the pause
# image and the grader image are imported into containerd.
#
#   scripts/kube-local.sh build          # packages and binaries (cached)
#   scripts/kube-local.sh up IMAGE       # the cluster, with IMAGE (a Docker image) imported
#   scripts/kube-local.sh down           # every daemon, pod, mount and link it made, gone
#
# Every daemon listens on 127.0.0.1. The node's address is 192.0.2.1 (a
# documentation address, routed nowhere) on a dummy link of its own, since
# the kubelet refuses a loopback one. Pods get addresses on a macvlan in
# private mode over a bridge of their own: a pod reaches no other pod, not
# the node and nothing beyond it, whatever NetworkPolicy says (this cluster
# has no policy engine). POD_NETWORK=bridge gives them a plain bridge
# instead, as a cluster whose NetworkPolicy nothing enforces would: pods
# then reach each other. up writes $KUBE_DIR/test.env, the settings of
# testenv.KubeConfig.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
K=${KUBE_DIR:-$REPO/var/kube}
KVER=${KVER:-1.37.2}
SVER=v0.${KVER#1.}
ETCD_PORT=23790
API_PORT=16443
NODE_IP=192.0.2.1
BIN=$K/bin PKI=$K/pki LOG=$K/logs
export PATH=$BIN:$PATH
mkdir -p "$K" "$BIN" "$PKI" "$LOG"

log() { printf '%s kube-local: %s\n' "$(date +%T)" "$*" >&2; }

build() {
	if ! command -v containerd >/dev/null || ! command -v etcd >/dev/null || ! [ -x /usr/lib/cni/macvlan ] || ! command -v ctr >/dev/null; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			etcd-server containerd runc containernetworking-plugins openssl iptables iproute2 conntrack socat >/dev/null
	fi
	if [ ! -e "$BIN/.k8s-$KVER" ]; then
		# k8s.io/kubernetes's go.mod replaces its staging modules with
		# ./staging paths, so go install of it fails: a scratch module
		# requires it and replaces each staging module with its published
		# version.
		local d=$K/k8sbuild t0
		t0=$(date +%s)
		mkdir -p "$d"
		(
			cd "$d"
			go mod download -json "k8s.io/kubernetes@v$KVER" >/dev/null
			local kmod
			kmod=$(go env GOMODCACHE)/k8s.io/kubernetes@v$KVER/go.mod
			{
				printf 'module local/k8sbuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$KVER"
				sed -n '/^replace/,/^)/p' "$kmod" | grep '=>' | awk -v V="$SVER" '{print "\t"$1" => "$1" "V}'
				printf ')\n'
			} >go.mod
			printf '//go:build tools\n\npackage tools\n\nimport (\n' >tools.go
			for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
				printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c" >>tools.go
			done
			printf ')\n' >>tools.go
			go mod tidy
			local ld="-s -w" p
			for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
				ld="$ld -X $p.gitVersion=v$KVER -X $p.gitMajor=1 -X $p.gitMinor=$(echo "$KVER" | cut -d. -f2)"
			done
			go build -trimpath -ldflags "$ld" -o "$BIN/" k8s.io/kubernetes/cmd/kube-apiserver \
				k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
				k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl
		)
		touch "$BIN/.k8s-$KVER"
		log "built Kubernetes v$KVER in $(($(date +%s) - t0)) s"
	fi
	if [ ! -x "$K/images/pause-root/pause" ]; then
		# The pod sandbox's pause process: any static program that waits
		# for SIGTERM and reaps children.
		mkdir -p "$K/pause" "$K/images/pause-root"
		(
			cd "$K/pause"
			printf 'module local/pause\n\ngo 1.26.0\n' >go.mod
			cat >main.go <<'EOF'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 4)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range c {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				if pid, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
EOF
			CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$K/images/pause-root/pause" .
		)
	fi
}

# pauseimage writes the pause image as a one-layer docker archive.
pauseimage() {
	local w diff cfg
	w=$(mktemp -d)
	tar --numeric-owner --owner=0 --group=0 -C "$K/images/pause-root" -cf "$w/layer.tar" .
	diff=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
	printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$diff" >"$w/config.json"
	cfg=$(sha256sum "$w/config.json" | cut -d' ' -f1)
	mv "$w/config.json" "$w/$cfg.json"
	mkdir "$w/$diff"
	mv "$w/layer.tar" "$w/$diff/layer.tar"
	printf '[{"Config":"%s.json","RepoTags":["registry.k8s.io/pause:3.10"],"Layers":["%s/layer.tar"]}]' "$cfg" "$diff" >"$w/manifest.json"
	tar -C "$w" -cf "$K/images/pause.tar" manifest.json "$cfg.json" "$diff"
	rm -rf "$w"
}

certs() {
	[ -s "$PKI/ca.crt" ] && return 0
	(
		cd "$PKI"
		openssl genrsa -out ca.key 2048 2>/dev/null
		openssl req -x509 -new -nodes -key ca.key -subj "/CN=testfirst-kube-local-ca" -days 365 -out ca.crt
		cert() {
			openssl genrsa -out "$1.key" 2048 2>/dev/null
			openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
			printf '%b' "$3" >"$1.ext"
			openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 -extfile "$1.ext" -out "$1.crt" 2>/dev/null
		}
		cert apiserver "/CN=kube-apiserver" "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n"
		# The node is "localhost": the API server reaches the kubelet by
		# its Hostname address, 127.0.0.1.
		cert kubelet-serving "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
		cert admin "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth\n"
		cert kcm "/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth\n"
		cert sched "/CN=system:kube-scheduler" "extendedKeyUsage=clientAuth\n"
		cert kubelet "/O=system:nodes/CN=system:node:localhost" "extendedKeyUsage=clientAuth\n"
		cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth\n"
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
	local u
	for u in admin kcm sched kubelet; do
		cat >"$K/$u.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: $PKI/ca.crt}
users:
- name: $u
  user: {client-certificate: $PKI/$u.crt, client-key: $PKI/$u.key}
contexts:
- name: local
  context: {cluster: local, user: $u}
current-context: local
EOF
	done
}

configs() {
	mkdir -p "$K/containerd" "$K/cni/net.d"
	cat >"$K/containerd/config.toml" <<EOF
version = 2
root = "$K/containerd/root"
state = "$K/containerd/state"
[grpc]
  address = "$K/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  # No CAP_SYS_RESOURCE on this kind of machine: runc cannot set the
  # negative oom_score_adj the kubelet asks for.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$K/cni/net.d"
EOF
	# A macvlan in private mode: each pod has an address, and no frame
	# passes between pods or to the node.
	if [ "${POD_NETWORK:-macvlan}" = bridge ]; then
		cat >"$K/cni/net.d/10-testfirst.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "testfirst", "plugins": [
  {"type": "bridge", "bridge": "tfpodsbr", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$K/cni/ipam", "ranges": [[{"subnet": "10.244.0.0/24"}]]}},
  {"type": "loopback"}]}
EOF
	else
		cat >"$K/cni/net.d/10-testfirst.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "testfirst", "plugins": [
  {"type": "macvlan", "master": "tfpods0", "mode": "private",
   "ipam": {"type": "host-local", "dataDir": "$K/cni/ipam", "ranges": [[{"subnet": "10.244.0.0/24"}]]}},
  {"type": "loopback"}]}
EOF
	fi
	cat >"$K/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 20250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 20248
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$K/containerd/containerd.sock
podPidsLimit: 512
maxPods: 30
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
EOF
}

links() {
	# Bridges, since this kind of machine's kernel has no dummy links: one
	# holds the node's address and nothing else; the other is the pods'
	# macvlan parent, given a carrier by a veth pair that leads nowhere.
	ip link show tfnode0 >/dev/null 2>&1 || {
		ip link add tfnode0 type bridge
		ip addr add "$NODE_IP/32" dev tfnode0
		ip link set tfnode0 up
	}
	ip link show tfpods0 >/dev/null 2>&1 || {
		ip link add tfpods0 type bridge
		ip link add tfpods0a type veth peer name tfpods0b
		ip link set tfpods0a master tfpods0
		ip link set tfpods0a up
		ip link set tfpods0b up
		ip link set tfpods0 up
	}
}

# start NAME CMD...: a daemon in the background, its pid in $K/NAME.pid.
start() {
	local name=$1
	shift
	if [ -s "$K/$name.pid" ] && kill -0 "$(cat "$K/$name.pid")" 2>/dev/null; then
		return 0
	fi
	nohup "$@" >"$LOG/$name.log" 2>&1 &
	echo $! >"$K/$name.pid"
}

wait_for() {
	local n=$1 i
	shift
	for ((i = 0; i < n * 5; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

kc() { "$BIN/kubectl" --kubeconfig "$K/admin.kubeconfig" "$@"; }

up() {
	local image=${1:?up needs the grader image, a Docker image reference}
	local t0
	t0=$(date +%s)
	[ -e "$BIN/.k8s-$KVER" ] || build
	certs
	configs
	links
	start etcd etcd --name testfirst --data-dir "$K/etcd-data" \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
		--initial-cluster testfirst=http://127.0.0.1:23800 --listen-metrics-urls http://127.0.0.1:23810
	wait_for 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health" || { log "etcd did not start: $LOG/etcd.log"; exit 1; }
	start kube-apiserver "$BIN/kube-apiserver" \
		--etcd-servers="http://127.0.0.1:$ETCD_PORT" --bind-address=127.0.0.1 --secure-port=$API_PORT --advertise-address=127.0.0.1 \
		--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
		--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc --service-cluster-ip-range=10.0.0.0/24 \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=Hostname \
		--endpoint-reconciler-type=none --profiling=false
	wait_for 180 kc get --raw=/readyz || { log "the API server did not get ready: $LOG/kube-apiserver.log"; exit 1; }
	log "API server ready $(($(date +%s) - t0)) s after start"
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$K/kcm.kubeconfig" \
		--authentication-kubeconfig="$K/kcm.kubeconfig" --authorization-kubeconfig="$K/kcm.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=20257 --use-service-account-credentials=true \
		--service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
		--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" --allocate-node-cidrs=false --leader-elect=false
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$K/sched.kubeconfig" \
		--authentication-kubeconfig="$K/sched.kubeconfig" --authorization-kubeconfig="$K/sched.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=20259 --leader-elect=false
	start containerd containerd --config "$K/containerd/config.toml"
	wait_for 30 test -S "$K/containerd/containerd.sock" || { log "containerd did not start: $LOG/containerd.log"; exit 1; }
	local A=$K/containerd/containerd.sock
	pauseimage
	ctr -a "$A" -n k8s.io images import "$K/images/pause.tar" >/dev/null
	# The grader image, from Docker's store; the chart and the provider
	# want it pinned by digest, so it is tagged by the digest containerd
	# gives it.
	local name=${image%%:*} digest
	docker save "$image" | ctr -a "$A" -n k8s.io images import - >/dev/null
	digest=$(ctr -a "$A" -n k8s.io images ls | awk -v i="docker.io/library/$image" '$1==i || $1=="'"$image"'" {print $3; exit}')
	[ -n "$digest" ] || { log "the grader image $image was not imported"; exit 1; }
	ctr -a "$A" -n k8s.io images tag --force "$(ctr -a "$A" -n k8s.io images ls -q | grep -F "$image" | head -1)" "docker.io/library/$name@$digest" >/dev/null
	start kubelet "$BIN/kubelet" --config="$K/kubelet-config.yaml" --kubeconfig="$K/kubelet.kubeconfig" \
		--hostname-override=localhost --node-ip="$NODE_IP" --root-dir="$K/kubelet-root" --cert-dir="$K/kubelet-root/pki"
	wait_for 120 sh -c "'$BIN/kubectl' --kubeconfig '$K/admin.kubeconfig' get node localhost -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -q True" ||
		{ log "the node did not get Ready: $LOG/kubelet.log"; exit 1; }
	log "node Ready $(($(date +%s) - t0)) s after start"
	cat >"$K/test.env" <<EOF
export TESTFIRST_KUBECONFIG=$K/admin.kubeconfig
export TESTFIRST_KUBE_IMAGE=docker.io/library/$name@$digest
export TESTFIRST_KUBE_NAMESPACE=testfirst-sandbox
EOF
	kc get nodes -o wide
}

down() {
	local n p
	for n in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
		[ -s "$K/$n.pid" ] || continue
		p=$(cat "$K/$n.pid")
		kill "$p" 2>/dev/null || true
		for _ in $(seq 1 60); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$p" 2>/dev/null || true
		rm -f "$K/$n.pid"
	done
	if [ -s "$K/containerd.pid" ]; then
		local A=$K/containerd/containerd.sock t
		for t in $(ctr -a "$A" -n k8s.io tasks ls -q 2>/dev/null); do ctr -a "$A" -n k8s.io tasks kill -s SIGKILL "$t" 2>/dev/null || true; done
		sleep 2
		for t in $(ctr -a "$A" -n k8s.io tasks ls -q 2>/dev/null); do ctr -a "$A" -n k8s.io tasks delete -f "$t" 2>/dev/null || true; done
		p=$(cat "$K/containerd.pid")
		kill "$p" 2>/dev/null || true
		for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
		rm -f "$K/containerd.pid"
	fi
	# Shims whose sockets are under $K, then every mount under $K, deepest
	# first, and the links.
	pkill -f "containerd-shim.*$K" 2>/dev/null || true
	awk -v k="$K/" 'index($2, k) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	for n in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^tf(node0|pods0|pods0a|pods0b|podsbr)$'); do ip link del "$n" 2>/dev/null || true; done
	rm -rf "$K/etcd-data" "$K/containerd/state" "$K/kubelet-root" "$K/cni/ipam"
	log "down"
}

case "${1:-}" in
build) build ;;
up)
	shift
	up "$@"
	;;
down) down ;;
*)
	echo "usage: $0 build | up IMAGE | down" >&2
	exit 2
	;;
esac
