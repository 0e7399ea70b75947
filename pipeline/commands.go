package pipeline

import "strings"

// Command is what a user asks of testfirst in an issue or pull request
// comment ("/testfirst status").
type Command string

// The commands testfirst knows.
const (
	// CommandStatus reports a ticket's or a pull request's state.
	CommandStatus Command = "status"
	// CommandRegrade grades a pull request's head again, or every open
	// pull request that closes a ticket.
	CommandRegrade Command = "regrade"
)

// ParseCommand returns the command of the first line of body that starts
// with "/testfirst", and whether there is one. The command is lowercased;
// "/testfirst" alone gives "".
func ParseCommand(body string) (Command, bool) {
	for _, line := range strings.Split(body, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "/testfirst" {
			continue
		}
		if len(fields) < 2 {
			return "", true
		}
		return Command(strings.ToLower(fields[1])), true
	}
	return "", false
}

// Known reports whether testfirst knows the command.
func (c Command) Known() bool { return c == CommandStatus || c == CommandRegrade }

// UnknownCommandReply answers a command testfirst does not know.
const UnknownCommandReply = "testfirst knows two commands: `/testfirst status` and `/testfirst regrade`."

// MayCommand reports whether someone with permission perm on the
// repository may give command c: status to anyone who can read it (the
// implementer of a pull request among them: it says what the check run
// and the grade page say), regrade only with write access.
func MayCommand(c Command, perm string) bool {
	if c == CommandStatus {
		return MaySeeCheck(perm, false)
	}
	return HasWriteAccess(perm)
}

// CommandRefusedReply answers a command from someone MayCommand refuses.
func CommandRefusedReply(c Command, owner, repo string) string {
	if c == CommandStatus {
		return "`/testfirst status` needs read access to " + owner + "/" + repo + "."
	}
	return "`/testfirst " + string(c) + "` needs write access to " + owner + "/" + repo + "."
}
