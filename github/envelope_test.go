package github

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkEnvelope compares readEnvelope with json.Unmarshal on body: both
// fail or both succeed, with the same values.
func checkEnvelope(t *testing.T, body []byte) {
	t.Helper()
	var got, want envelope
	gotErr := readEnvelope(body, &got)
	wantErr := json.Unmarshal(body, &want)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("readEnvelope(%.200q) error = %v, json.Unmarshal error = %v", body, gotErr, wantErr)
	}
	if gotErr == nil {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("readEnvelope(%.200q) (-json.Unmarshal +readEnvelope):\n%s", body, diff)
		}
	}
}

// envelopeCases are the corners where a hand-written JSON walk could part
// from encoding/json.
var envelopeCases = []string{
	``, ` `, `{}`, ` { } `, `null`, ` null `, `true`, `false`, `0`, `-1.5e+3`, `"s"`, `[]`, `[1,2]`,
	`{"action":"labeled"}`, `{"action":"labeled","installation":{"id":42}}`,
	`{"installation":{"id":42,"node_id":"MDIz"},"action":"created"}`,
	`{"installation":null}`, `{"installation":{"id":null}}`, `{"installation":{}}`,
	`{"ACTION":"x","Installation":{"ID":7}}`, `{"\u0061ction":"escaped key"}`, `{"actio\n":"x"}`,
	`{"ſ":"long s"}`, `{"inſtallation":{"id":5}}`, "{\"action\":\"unit\x1fseparator\"}", "{\"action\":\"del\x7f\"}", "{\"a\":\"unit\x1fseparator\"}", "{\"a\":\"nul\x00\"}", "{\"a\":\"\x20\"}", `{"action":"a","action":"b"}`, `{"installation":{"id":1},"installation":{"x":2}}`,
	`{"installation":{"id":1},"installation":null}`,
	`{"installation":{"account":{"id":5},"id":7}}`, `{"installation":{"account":{"id":5}}}`, `{"installation":{"ID":7}}`,
	`{"installation":{"\u0069d":7}}`, `{"installation":{"ıd":7}}`, `{"installation":{"id":1,"id":2}}`, `{"installation":{"id":"x","other":[1]}}`,
	`{ "installation" : { "id" : 7 , "x" : { } } }`, `{"Installation":{"id":7},"installation":null}`, `{"installation":{"id":7},"Installation":{"node_id":"x"}}`,
	`{"installation":[{"id":7}]}`, `{"installation":"7"}`, `{"\u0069nstallation":{"id":7,"x":1}}`,
	`{"action":5}`, `{"action":null}`, `{"installation":5}`, `{"installation":{"id":"7"}}`, `{"installation":{"id":1.5}}`,
	`{"installation":{"id":99999999999999999999}}`, `{"action":"x","installation":[1]}`,
	`{"action":"caf\u00e9 \ud83d\ude00 \ud800"}`, "{\"action\":\"\xff\xfe\"}", "{\"action\":\"tab\tinside\"}",
	`{"a":[1,{"b":[true,false,null,"x",-0,0.5,1e5,1E-5]}],"action":"deep"}`,
	`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`, `{"a":True}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"unterminated}`, `{"a" "b"}`, `{"a":1,}`, `{,}`,
	`{"a":1 "b":2}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":{"b":}}`, `{"a":{1:2}}`,
	`{"a":1}}`, `{"a":1} x`, `{"a":1}{}`, `{"a":[}`, `{"a":{]}`, `{'a':1}`, `{"a":1}` + "\n\t\r ",
	"\ufeff{}", `{"a":NaN}`, `{"a":Infinity}`, `[1,2`, `"unterminated`, `nul`,
}

// jsonValues are single values, valid and not, that TestReadEnvelope
// places where only the walk (not the final decode) judges them.
var jsonValues = []string{
	`0`, `-0`, `01`, `-01`, `1.5`, `1.`, `.5`, `-`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `+1`, `0x1`, `1_0`,
	`true`, `tru`, `truex`, `false`, `fals`, `null`, `nul`, `True`, `NaN`,
	`""`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u00e9"`, `"\u00E9"`, `"\u12"`, `"\u123"`, `"\u123x"`, `"\u12g4"`, `"\x"`, `"\a"`, `"\'"`,
	`"\`, `"abc`, "\"\x00\"", "\"\x1f\"", "\"\x20\"", "\"\x7f\"", "\"\xff\"", "\"\t\"", "\"\n\"",
	`[]`, `[ ]`, `[1]`, `[1,]`, `[,1]`, `[1 2]`, `[[]]`, `[[]`, `[]]`, `{}`, `{ }`, `{"b":1}`, `{"b":1,}`, `{"b"}`, `{"b":}`,
	`{1:2}`, `{"b":1 "c":2}`, `{"b":[{"c":[]}]}`, `{"b":[{"c":[}]}`, `'x'`, ``,
}

func TestReadEnvelopeMatchesEncodingJSON(t *testing.T) {
	for _, c := range envelopeCases {
		checkEnvelope(t, []byte(c))
	}
	for _, v := range jsonValues {
		for _, wrap := range []string{`%s`, `{"a":%s}`, `{"action":"x","a":[1,%s,2],"installation":{"id":3}}`, `{%s:1}`, `{"a":{%s:1}}`, `{"a":{"b":%s}}`} {
			checkEnvelope(t, []byte(strings.Replace(wrap, "%s", v, 1)))
		}
	}
	// Nesting at and just past encoding/json's limit, inside the object
	// and at the top.
	for _, depth := range []int{maxJSONDepth - 2, maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		checkEnvelope(t, []byte(`{"a":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}`))
		checkEnvelope(t, []byte(`{"a":`+strings.Repeat(`{"b":`, depth)+"1"+strings.Repeat("}", depth)+`}`))
		checkEnvelope(t, []byte(strings.Repeat("[", depth)+strings.Repeat("]", depth)))
	}
}

// TestReadEnvelopeDeepNesting: far past the limit, a walk that recursed
// would exhaust the stack; this one refuses.
func TestReadEnvelopeDeepNesting(t *testing.T) {
	body := []byte(`{"a":` + strings.Repeat("[", 1<<22))
	var env envelope
	if err := readEnvelope(body, &env); err == nil {
		t.Fatal("readEnvelope accepted 4 Mi unclosed arrays")
	}
}

func TestReadEnvelopeEveryFixture(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "github-webhooks", "*", "*.json"))
	if len(files) < 20 {
		t.Fatalf("only %d fixtures found", len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkEnvelope(t, body)
		// Cut short anywhere, a payload is refused as encoding/json refuses it.
		for _, n := range []int{1, len(body) / 3, len(body) / 2, len(body) - 2} {
			checkEnvelope(t, body[:n])
		}
	}
}

// FuzzReadEnvelope: on any input readEnvelope agrees with json.Unmarshal.
func FuzzReadEnvelope(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	for _, v := range jsonValues {
		f.Add([]byte(`{"a":` + v + `}`))
	}
	for _, name := range []string{"installation/created.payload.json", "issues/labeled.payload.json"} {
		body, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "github-webhooks", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkEnvelope(t, body)
	})
}

// BenchmarkReadEnvelope runs on the two payloads of testfirst bench intake.
func BenchmarkReadEnvelope(b *testing.B) {
	for _, name := range []string{"issues/assigned", "installation_repositories/added"} {
		body, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "github-webhooks", name+".payload.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/readEnvelope", func(b *testing.B) {
			for b.Loop() {
				var env envelope
				if err := readEnvelope(body, &env); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/json.Unmarshal", func(b *testing.B) {
			for b.Loop() {
				var env envelope
				if err := json.Unmarshal(body, &env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
