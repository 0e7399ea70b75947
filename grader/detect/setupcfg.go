package detect

import "strings"

// SetupCfgValue is one line of a value in a setup.cfg: the section and key
// it belongs to, and the line's text. A key's first line and each of its
// continuation lines are separate values, as setup.cfg's list values hold
// one item per line.
type SetupCfgValue struct {
	Section, Key, Line string
}

// SetupCfgValues reads a setup.cfg the way setuptools' INI parser does for
// the keys the grader uses: sections in brackets, "key = value" or
// "key: value", indented continuation lines, "#" and ";" comments. Empty
// first lines (a list that starts on the next line) are left out.
func SetupCfgValues(text string) []SetupCfgValue {
	var out []SetupCfgValue
	section, key := "", ""
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ";") {
			continue
		}
		if strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]") {
			section, key = strings.TrimSpace(trimmed[1:len(trimmed)-1]), ""
			continue
		}
		var value string
		if line[0] == ' ' || line[0] == '\t' {
			if key == "" {
				continue // a continuation of nothing
			}
			value = trimmed
		} else if m := cfgKey.FindStringSubmatch(trimmed); m != nil {
			key, value = m[1], strings.TrimSpace(m[2])
		} else {
			key = ""
			continue
		}
		if value != "" {
			out = append(out, SetupCfgValue{Section: section, Key: key, Line: value})
		}
	}
	return out
}
