package wrapper

// Paths inside the container.
const (
	// HiddenDir holds the hidden tests: root-owned, dirs 0755, files 0644.
	// The wrapper makes it so itself before it writes anything, whatever
	// the provider mounted (see sealRootDirs).
	HiddenDir = "/hidden"
	// RepoDir holds the tree under test, owned by the test uid.
	RepoDir = "/repo"
	// BinaryPath is where the grader image keeps the wrapper.
	BinaryPath = "/opt/testfirst/wrapper"
	// PluginModule is the wrapper-owned pytest plugin, installed in the
	// image's dist-packages, that adds RepoDir to sys.path once pytest has
	// loaded its plugins.
	PluginModule = "testfirst_syspath"
)

// Archive entry names.
const (
	JobEntry     = "job.json"
	HiddenPrefix = "hidden/"
	RepoPrefix   = "repo/"
)

// Modes of a Job.
const (
	ModePytest  = "pytest"
	ModeCommand = "command"
	// ModeMutants runs the hidden tests once per mutant of the tree; see
	// MutantsJob.
	ModeMutants = "mutants"
	// ModeCollect only collects the hidden tests against the tree
	// (pytest --collect-only) and reports their node ids in
	// Result.Collected; nothing runs.
	ModeCollect = "collect"
	// ModeEnvironment installs dependencies with pip; see EnvironmentJob.
	ModeEnvironment = "environment"
)

// Job tells the wrapper what to run. It is the first entry of the input
// archive.
type Job struct {
	// Mode is one of the Mode constants.
	Mode string `json:"mode"`
	// Command is the test command for ModeCommand, run in RepoDir.
	Command []string `json:"command,omitempty"`
	// UIDSplit runs the tests as TestUID with no capabilities. Without it the
	// tests run as the wrapper's own uid.
	UIDSplit bool `json:"uid_split"`
	// TestUID is the unprivileged uid (and gid) the tests run as.
	TestUID int `json:"test_uid"`
	// Split runs a pytest job split: the hidden tests and pytest as
	// GraderUID, the only uid that can read HiddenDir, and every module of
	// the tree in a process of its own as TestUID (see SplitCommand). It
	// needs UIDSplit and no twins.
	Split     bool `json:"split,omitempty"`
	GraderUID int  `json:"grader_uid,omitempty"`
	// TimeoutMillis bounds the test run; the wrapper kills it after that.
	TimeoutMillis int64 `json:"timeout_ms"`
	// Canaries are the tokens to look for in everything the run prints.
	Canaries []string `json:"canaries,omitempty"`
	// ProcLimit caps the processes and threads of the test uid
	// (RLIMIT_NPROC), below the container's pids limit so the wrapper keeps
	// room to work when the code under test forks without end. 0: no cap.
	ProcLimit int `json:"proc_limit"`
	// OutputLimit and JUnitLimit bound what is kept of the run's output
	// and of its JUnit XML.
	OutputLimit int64 `json:"output_limit"`
	JUnitLimit  int64 `json:"junit_limit"`
	// Twins, TwinSeed and TwinExclude ask for twins of the hidden tests:
	// see TwinJob.
	TwinJob
	// Select, when set, runs only these hidden tests of a pytest job, by
	// function id ("file::name" or "file::Class::name"); the sentinels run
	// too, and Result.Expected lists only the selected tests.
	Select []string `json:"select,omitempty"`
	// Reverse runs a pytest job's hidden tests in the reverse of their
	// order in the files, so a test that depends on another's leftovers
	// comes out differently.
	Reverse bool `json:"reverse,omitempty"`
	// SourceDir, when set, is the directory of the tree under test
	// (relative to RepoDir, e.g. "src") that holds its packages: it joins
	// sys.path just before RepoDir. The grader decides it from the base
	// tree's layout, never from the tree under test alone.
	SourceDir string `json:"source_dir,omitempty"`
	// Mutants is the mutation job of ModeMutants.
	Mutants *MutantsJob `json:"mutants,omitempty"`
	// Collected are hidden tests a trusted collection (a ModeCollect run
	// against the base or reference tree) found that the syntax-tree
	// listing could not know: the cases of tests it lists with
	// CasesUnknown, and tests it does not list at all. They join the
	// expected tests.
	Collected []ExpectedTest `json:"collected,omitempty"`
	// Environment is the install job of ModeEnvironment.
	Environment *EnvironmentJob `json:"environment,omitempty"`
	// Agent is the agent job of ModeAgent.
	Agent *AgentJob `json:"agent,omitempty"`
	// Proxy relays ProxyAddr to the egress proxy mounted at ProxySocket,
	// and names it as the HTTP proxy of what the job runs.
	Proxy bool `json:"proxy,omitempty"`
}

// ExpectedTest is a hidden test found by reading the hidden files' syntax
// tree before any code under test exists in the container.
type ExpectedTest struct {
	File string `json:"file"`
	// Class is the class inside the file; a nested class is dotted, as
	// pytest's JUnit classname has it ("TestOuter.TestInner").
	Class string `json:"class,omitempty"`
	Name  string `json:"name"`
	// Cases are the ids pytest gives a parametrized test's cases ("1-2"),
	// known from literal parametrize arguments; CasesUnknown is set when
	// the test is parametrized in a way the syntax does not tell (a
	// computed list, a parametrized fixture). Neither: not parametrized.
	Cases        []string `json:"cases,omitempty"`
	CasesUnknown bool     `json:"cases_unknown,omitempty"`
}

// Sentinel is a wrapper-generated test with a known outcome.
type Sentinel struct {
	ClassName string `json:"classname"`
	Name      string `json:"name"`
	// MustPass is true for a test that must pass, false for one that must
	// fail.
	MustPass bool `json:"must_pass"`
}

// Isolation is what /proc said about the test process right after it
// started.
type Isolation struct {
	UID        int    `json:"uid"`
	GID        int    `json:"gid"`
	CapEff     string `json:"cap_eff"`
	CapPrm     string `json:"cap_prm"`
	CapAmb     string `json:"cap_amb"`
	NoNewPrivs bool   `json:"no_new_privs"`
	// Proven is true when every uid and gid is TestUID, every capability
	// set is empty and no_new_privs is set.
	Proven bool `json:"proven"`
	// Dirs are HiddenDir, TmpDir and RepoDir as the wrapper saw them just
	// before the test process started; DirsSealed is true when each was
	// what it must be (HiddenDir and every entry below it root-owned and
	// not writable by the test uid, TmpDir root-owned 1777).
	Dirs       []DirState `json:"dirs"`
	DirsSealed bool       `json:"dirs_sealed"`
	// Inferred says which of these the runtime's /proc did not show and
	// how they were proven instead (see proveIsolation); empty when /proc
	// showed them all.
	Inferred string `json:"inferred,omitempty"`
	// Error says why the evidence could not be read.
	Error string `json:"error,omitempty"`
}

// Result is the wrapper's report, written once to its stdout.
type Result struct {
	// Error is set when the wrapper itself could not do its job.
	Error string `json:"error,omitempty"`
	// Expected lists the hidden tests, ListError says why they could not be
	// listed.
	Expected  []ExpectedTest `json:"expected"`
	ListError string         `json:"list_error,omitempty"`
	Sentinels []Sentinel     `json:"sentinels"`
	// Runner is the command line that ran the tests.
	Runner []string `json:"runner"`
	// ExitCode is the runner's exit status; Signal is set when a signal
	// ended it.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// TimedOut is true when the wrapper killed the run at its deadline.
	TimedOut bool `json:"timed_out"`
	// JUnit is the report the runner wrote to the JUnit pipe (for pytest,
	// the report EvidenceModule wrote).
	JUnit          []byte `json:"junit"`
	JUnitTruncated bool   `json:"junit_truncated"`
	// Output is what the run printed: all of it up to OutputLimit, else its
	// start and its end with a line between them that says how many bytes
	// were cut. OutputBytes counts all of it.
	Output          []byte `json:"output"`
	OutputBytes     int64  `json:"output_bytes"`
	OutputTruncated bool   `json:"output_truncated"`
	// CanariesSeen lists the canary tokens that appeared anywhere in the
	// run's output, also past OutputLimit.
	CanariesSeen []string `json:"canaries_seen"`
	// Isolation is the evidence of the uid split.
	Isolation Isolation `json:"isolation"`
	// Leftovers counts processes of the test uid still alive after the
	// runner exited; the wrapper killed them.
	Leftovers int `json:"leftovers"`
	// Seconds is how long the test run took.
	Seconds float64 `json:"seconds"`
	// Evidence is what the runner's plugin reported on its own pipe; nil
	// for a command job.
	Evidence *RuntimeEvidence `json:"evidence,omitempty"`
	// Twins is the map of the twins the run's hidden tests were replaced
	// with; set only when the job asked for twins.
	Twins *TwinMap `json:"twins,omitempty"`
	// MutantCandidates counts the mutants the added lines allow, before
	// the job's bound; Mutants are the runs of this shard's mutants.
	MutantCandidates int         `json:"mutant_candidates,omitempty"`
	Mutants          []MutantRun `json:"mutants,omitempty"`
	// Collected are the node ids (below HiddenDir) pytest collected in a
	// ModeCollect run; CollectErrors counts the hidden modules it could not
	// collect.
	Collected     []string `json:"collected,omitempty"`
	CollectErrors int      `json:"collect_errors,omitempty"`
	// Packages lists, as "name==version", what an environment job
	// installed.
	Packages []string `json:"packages,omitempty"`
	// Unavailable are the requirements an environment job could not
	// install, each alone after pip failed on them all together; the rest
	// are installed.
	Unavailable []Unavailable `json:"unavailable,omitempty"`
	// Agent is what an agent job handed back.
	Agent *AgentResult `json:"agent,omitempty"`
	// Split is what the trusted side of a split run reported.
	Split *SplitReport `json:"split,omitempty"`
}

// Unavailable is a requirement an environment job could not install.
type Unavailable struct {
	Requirement string `json:"requirement"`
	// Error is pip's last ERROR: line for it (the build's own words,
	// which the grader redacts and does not post as they are).
	Error string `json:"error"`
	// Missing is true when pip found no distribution for it.
	Missing bool `json:"missing,omitempty"`
}
