# testfirst: the two commands of the README are `make run` and `make test`.
# Both install what is missing (Docker engine, mmdebstrap, the grader image)
# and are safe to run again.

GO      ?= go
BIN     := $(CURDIR)/bin
SAMPLE  := test/testdata/sample
RUNDIR  := var/run

export TESTFIRST_WRAPPER := $(BIN)/testfirst-wrapper

# No package needs cgo (SQLite is modernc.org's, in Go), so nothing is
# linked by the system's linker: with cgo, each test binary's link also ran
# gcc's ld, 88 of make test's CPU seconds (process accounting, 2026-12-07).
export CGO_ENABLED := 0

.PHONY: all build deps image docker test testbin suite-pkgs suite-rest suite-services suite-faults suite-split suite-runsc suite-runsc-leg suite-disruptive compile test-split test-docker test-agents test-runsc test-kube vet unit fuzz run demo bench soak clean

all: build

## build: the testfirst binary and its static sandbox wrapper, in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./cmd/testfirst ./cmd/testfirst-wrapper

## deps: Docker engine, mmdebstrap, Debian's pytest and PostgreSQL, installed and started
deps:
	@scripts/ensure-deps.sh

## image: the grader image, built from Debian packages when missing
image: build deps
	$(BIN)/testfirst image build

## docker: the container image of the service (README, "Container image").
# The default GO_IMAGE, golang:1.26-bookworm, comes from an image registry;
# without one, pass a local image: make docker GO_IMAGE=my-go-image
DOCKER_IMAGE ?= testfirst
GO_IMAGE     ?=

docker:
	docker build $(if $(GO_IMAGE),--build-arg GO_IMAGE=$(GO_IMAGE)) -t $(DOCKER_IMAGE) .

## test: vet, then every test against the real Docker engine and grader image
# PostgreSQL comes from scripts/ensure-deps.sh (role and database testfirst).
TEST_POSTGRES_URL ?= postgres://testfirst:testfirst@127.0.0.1:5432/testfirst?sslmode=disable

# The end-to-end tests of a served pipeline spend their time waiting (for a
# job's rescue, a retry, a store's timeout), not computing: they run in two
# go test processes of their own (the fault cases, the other served tests)
# beside the rest of the suite, the split attacks and the gVisor leg, each
# printing its output when it ends. With the served tests in two processes
# (2026-12-03) the load average reached 40, one of them took 1,137 s alone,
# and the fault cases' base check, a job cancelled 53 s in
# (job_rescue_after 60 s), did not finish in 8 minutes: one process again. TestDockerfile, which compiles every dependency inside a
# container, is make test-docker's.
FAULT_TESTS   := TestFaultsGrading|TestFaultsWebhookBurst|TestFaultsDiskFullSQLite
# The attacks on split grading (attacks-split; make test-split grades the
# whole corpus split) are a leg of their own beside the fault cases,
# which mostly wait: after them, in one leg, they made make test take 20 min.
SPLIT_TESTS   := TestAttacksSplit|TestSplitFallback
# Tests that wait on pip, an index or a hanging run more than they compute
# go after the gVisor corpus, the leg that ends first: in the rest they
# made make test take 22 min.
AFTER_RUNSC_TESTS := TestEnvironments|TestIndexCredentialsNeverShown|TestUnreachableIndexSaysSo|TestNoSecretLeaves|TestHangingBase|TestHangingBaseSplit|TestSampleCasesSplit
SERVICE_TESTS := TestServeReplicasOnPostgres|TestServeScenarioOneTicket|TestServeAgents|TestServeRolesOnPostgres|TestUIDSplitRequired|TestServeTicketLifecycle|TestServeQueueAndTwoTickets|TestServePastedTestContaminatesNextGrade|TestServeKeepTestsAfterPass|TestServeRegressions
OWN_TARGET    := TestDockerfile
TEST_ENV := TESTFIRST_REQUIRE_DOCKER=1 TESTFIRST_TEST_POSTGRES_URL='$(TEST_POSTGRES_URL)'

# The legs of make test run ./test/'s tests from one binary, linked once
# by compile: linking it (200 MB) took 18 CPU s, and each of five go test
# processes linked it again, at once, 1.6 GB of memory each. A leg run by
# itself (make suite-split) links it first.
TEST_BIN    := $(CURDIR)/var/test.test
TESTBIN_DEP := $(if $(TESTBIN_BUILT),,testbin)
RUN_TEST    = $(TEST_BIN) -test.count=1 -test.v
# scripts/leg runs a leg with its whole verbose output in var/log/LEG.log
# and prints the failing tests' output and the leg's slowest tests.
LEG         := $(CURDIR)/scripts/leg
# Every package but ./test/, run by go test in a leg of their own.
OTHER_PKGS  = $(shell GOFLAGS= $(GO) list ./... | grep -v '/test$$')

# Last, alone, the two fault cases that restart the machine's Docker
# engine and PostgreSQL server mid-grade: nothing else may use them then.
# FAULTS_DISRUPTIVE=0 leaves them out on a machine whose daemons others
# share.
FAULTS_DISRUPTIVE ?= 1

# On a fresh machine compiling every package and test binary takes 955 s
# of the two cores (492 s wall; measured with an empty GOCACHE), and the
# image build mostly waits on Debian's mirror: the two run side by side.
test: deps
	@$(MAKE) --no-print-directory -j2 --output-sync=target image compile
	@$(MAKE) --no-print-directory -j6 --output-sync=target TESTBIN_BUILT=1 suite-rest suite-pkgs suite-services suite-faults suite-split suite-runsc-leg
	$(if $(filter 1,$(FAULTS_DISRUPTIVE)),@$(MAKE) --no-print-directory TESTBIN_BUILT=1 suite-disruptive)

testbin:
	@mkdir -p $(dir $(TEST_BIN))
	$(GO) test -c -o $(TEST_BIN) ./test/

# suite-pkgs: every package but ./test/, beside ./test/'s rest (suite-rest),
# which before waited 7 minutes behind them in one go test process.
suite-pkgs:
	$(TEST_ENV) $(LEG) pkgs $(GO) test -v -count=1 -timeout 30m $(OTHER_PKGS)

suite-rest: $(TESTBIN_DEP)
	cd test && $(TEST_ENV) $(LEG) rest $(RUN_TEST) -test.timeout 45m -test.skip '^($(FAULT_TESTS)|$(SERVICE_TESTS)|$(SPLIT_TESTS)|$(AFTER_RUNSC_TESTS)|$(OWN_TARGET))$$'

suite-services: $(TESTBIN_DEP)
	cd test && $(TEST_ENV) $(LEG) services $(RUN_TEST) -test.timeout 45m -test.run '^($(SERVICE_TESTS))$$'

suite-faults: $(TESTBIN_DEP)
	cd test && $(TEST_ENV) $(LEG) faults $(RUN_TEST) -test.timeout 45m -test.run '^($(FAULT_TESTS))$$'
	cd test && $(TEST_ENV) TESTFIRST_AGENT_PRESETS=1 $(LEG) presets $(RUN_TEST) -test.timeout 20m -test.run '^TestPresetCLIs$$/^claude-code$$'

suite-split: $(TESTBIN_DEP)
	cd test && $(TEST_ENV) $(LEG) split $(RUN_TEST) -test.timeout 30m -test.run '^($(SPLIT_TESTS))$$'

## test-split: the whole in-process corpus graded split as well (make test
# grades split only the attacks on split grading, attacks-split), and the
# honest sample cases split
test-split: image
	TESTFIRST_REQUIRE_DOCKER=1 TESTFIRST_SPLIT_CORPUS=all $(GO) test -count=1 -timeout 45m -run '^(TestAttacksSplit|TestSampleCasesSplit)$$' ./test/

suite-disruptive: $(TESTBIN_DEP)
	cd test && $(TEST_ENV) TESTFIRST_FAULTS_DISRUPTIVE=1 $(LEG) disruptive $(RUN_TEST) -test.timeout 15m -test.run '^TestFaults(Docker|Postgres)Restart$$'

suite-runsc: $(TESTBIN_DEP)
	cd test && TESTFIRST_REQUIRE_DOCKER=1 TESTFIRST_SANDBOX_RUNTIME=runsc TESTFIRST_RUNSC_ATTACKS=$(RUNSC_ATTACKS) $(LEG) runsc $(RUN_TEST) -test.timeout 45m -test.run '^(TestAttacks|TestSampleCases)$$'

# suite-runsc-leg: a leg of make test, a gVisor smoke and then the
# tests that mostly wait. Under gVisor it grades the honest cases and one
# attack of each way out of the runner's process (runscSmoke in
# test/corpus_test.go); every attack is graded under runc in suite-rest,
# and under gVisor by make test-runsc. Grading all 31 attacks on the
# sandbox under gVisor here took 420 s of the two cores.
suite-runsc-leg: $(TESTBIN_DEP)
	@$(MAKE) --no-print-directory suite-runsc RUNSC_ATTACKS=smoke
	cd test && $(TEST_ENV) $(LEG) after-runsc $(RUN_TEST) -test.timeout 30m -test.run '^($(AFTER_RUNSC_TESTS))$$'

## test-docker: the service's Dockerfile built with a local Go image (its
# dependencies compiled inside a container: minutes on 2 cores the first
# time), then the image run: its commands, the engine from inside, serve
test-docker: image
	TESTFIRST_REQUIRE_DOCKER=1 $(GO) test -count=1 -timeout 45m -run '^($(OWN_TARGET))$$' -v ./test/

## test-agents: the claude-code and codex presets' real CLIs in the agent sandbox
# (make test runs claude-code's)
# against a scripted model API; their images are built from Debian packages and
# the npm registry (registry.npmjs.org must be reachable) the first time
test-agents: deps
	TESTFIRST_REQUIRE_DOCKER=1 TESTFIRST_AGENT_PRESETS=1 $(GO) test -count=1 -timeout 20m -run '^TestPreset(CLIs|ImagePins)$$' -v ./test/

## test-runsc: the whole adversarial corpus and the honest sample cases again,
# every sandbox under gVisor's runsc (registered by scripts/ensure-deps.sh);
# 3 to 4.5 minutes on 2 cores (docs/benchmarks.md)
test-runsc: image
	@$(MAKE) --no-print-directory suite-runsc

## test-kube: a real single-node Kubernetes on this machine
# (scripts/kube-local.sh: etcd, containerd, runc and the CNI plugins from
# Debian, the control plane and kubelet built from k8s.io/kubernetes and
# kept in var/kube/bin), the chart installed with Helm's Go packages, the
# sample's cases and the sandbox attacks graded in pods as the chart's
# grader account; then everything it started is taken down. Not part of
# make test (docs/benchmarks.md has its cold and cached times).
test-kube: image
	scripts/kube-local.sh build
	scripts/kube-local.sh down
	scripts/kube-local.sh up $$($(BIN)/testfirst image build | cut -d' ' -f1) && . var/kube/test.env && \
		TESTFIRST_REQUIRE_KUBE=1 $(GO) test -count=1 -timeout 40m -run '^TestKubernetes' -v ./test/; \
		rc=$$?; scripts/kube-local.sh down; exit $$rc

## soak: SOAK_DURATION (1h) of realistic load on two replicas on PostgreSQL:
# a delivery a second, a grade a minute, a replica killed every ten minutes;
# logs RSS, goroutines and containers every 30 s and checks at the end that
# every check run completed. Not part of make test. A short run:
# make soak SOAK_DURATION=5m
SOAK_DURATION ?= 1h

soak: image
	TESTFIRST_REQUIRE_DOCKER=1 TESTFIRST_TEST_POSTGRES_URL='$(TEST_POSTGRES_URL)' TESTFIRST_SOAK_DURATION=$(SOAK_DURATION) \
		$(GO) test -count=1 -v -timeout 3h -run '^TestSoak$$' ./test/

## fuzz: every fuzz test for FUZZTIME each (intake, configuration, links).
# Not part of make test, which runs their seed corpora as tests: beside the
# restart cases it took 9 of make test's 33 minutes on 2 cores (2026-12-07,
# most of it compiling each package again with coverage instrumentation).
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# report its own deadline as a failure ("context deadline exceeded", no
# crasher written; go.dev/issue/75804), which failed CI once. 20000 runs of
# each took 59 s here, about what 10 s each took.
FUZZTIME ?= 20000x
FUZZ := handlers:FuzzWebhook github:FuzzVerifyDelivery github:FuzzReadEnvelope \
	app:FuzzParseConfigYAML pipeline:FuzzParseRepoConfig pipeline:FuzzLinks

fuzz:
	@for t in $(FUZZ); do \
		pkg=$${t%%:*}; fn=$${t#*:}; \
		echo "fuzz $$fn ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) ./$$pkg/ || exit 1; \
	done

vet:
	$(GO) vet ./...

# compile: after the binaries (which the image needs too, so not twice at
# once), vet, then every package and test package compiled (go list
# -export compiles, links nothing), so that the legs of make test start on
# a warm build cache, and ./test/'s binary linked once for them. Linking
# every test binary here, as this did before, cost 118 CPU s on a warm
# cache, all of it done again by the legs.
compile: build
	@$(MAKE) --no-print-directory vet
	$(GO) list -export -test -deps ./... >/dev/null
	@$(MAKE) --no-print-directory testbin

## run: the service on this machine, on its embedded defaults (SQLite and the
# hidden-test store in var/, the local Docker engine); it prints the URL of
# the page that registers the GitHub App. Stop it with Ctrl-C.
run: image
	@$(BIN)/testfirst keys init >/dev/null
	$(BIN)/testfirst serve

## demo: a self-contained tour: grade the sample project, its reference
# implementation as the pull request
demo: image
	@rm -rf $(RUNDIR) && mkdir -p $(RUNDIR)/pr
	@cp -R $(SAMPLE)/base/. $(RUNDIR)/pr/
	@patch -s -d $(RUNDIR)/pr -p1 < $(SAMPLE)/reference.patch
	$(BIN)/testfirst grade --repo $(RUNDIR)/pr --tests $(SAMPLE)/hidden \
		--base $(SAMPLE)/base --reference $(SAMPLE)/reference.patch --format text

## bench: sealed (default runtime and gVisor's runsc) against bare pytest on a suite of about 2 s
bench: image
	$(BIN)/testfirst bench grade --repo test/testdata/bench/repo --tests test/testdata/bench/hidden --runs 10 --runtime runsc

clean:
	rm -rf $(BIN) var/run
