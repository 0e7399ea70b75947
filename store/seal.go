package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"filippo.io/age"
)

// seal encrypts data to every recipient.
func seal(data []byte, rs []age.Recipient) ([]byte, error) {
	if len(rs) == 0 {
		return nil, errors.New("seal: no recipients")
	}
	var out bytes.Buffer
	w, err := age.Encrypt(&out, rs...)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return out.Bytes(), nil
}

// unseal decrypts data with one of ids. age authenticates the payload: a
// changed byte is an error, never different plaintext.
func unseal(data []byte, ids []age.Identity) ([]byte, error) {
	r, err := age.Decrypt(bytes.NewReader(data), ids...)
	if err != nil {
		return nil, fmt.Errorf("unseal: %w", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("unseal: %w", err)
	}
	return out, nil
}

// ParseRecipients reads age X25519 recipients ("age1…") separated by
// commas, spaces or newlines; lines starting with # are comments.
func ParseRecipients(s string) ([]age.Recipient, error) {
	var rs []age.Recipient
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			r, err := age.ParseX25519Recipient(f)
			if err != nil {
				return nil, fmt.Errorf("recipient %q: %w (want an age X25519 recipient, age1…)", f, err)
			}
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil, errors.New("no recipients given")
	}
	return rs, nil
}

// ReadIdentities reads age identities from a file, which must not be
// readable by other users: mode 0600 or stricter, or the shape Kubernetes
// gives a Secret mounted into a pod that runs as a non-root user with an
// fsGroup (owned by root, group-readable by one of this process's groups,
// nothing more).
func ReadIdentities(path string) ([]age.Identity, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("identity file: %w", err)
	}
	if !privateFile(info) {
		return nil, fmt.Errorf("identity file %s has mode %o: chmod 600 %s", path, info.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("identity file: %w", err)
	}
	ids, err := age.ParseIdentities(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("identity file %s: %w", path, err)
	}
	return ids, nil
}

// InitIdentity creates an age X25519 identity at path (0600, its directory
// 0700) and its recipient beside it at path's name with "identity"
// replaced by "recipient" (or path + ".pub"). An existing identity is kept:
// InitIdentity then returns its recipient and created false.
func InitIdentity(path string) (recipient string, created bool, err error) {
	pub := RecipientPath(path)
	if ids, err := ReadIdentities(path); err == nil {
		x, ok := ids[0].(*age.X25519Identity)
		if !ok {
			return "", false, fmt.Errorf("identity file %s: not an X25519 identity", path)
		}
		return x.Recipient().String(), false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	body := fmt.Sprintf("# public key: %s\n%s\n", id.Recipient(), id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create identity: %w", err)
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return "", false, err
	}
	if err := f.Close(); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(pub, []byte(id.Recipient().String()+"\n"), 0o644); err != nil {
		return "", false, err
	}
	return id.Recipient().String(), true, nil
}

// RecipientPath is where InitIdentity writes the recipient of the identity
// at path.
func RecipientPath(path string) string {
	dir, base := filepath.Split(path)
	if strings.Contains(base, "identity") {
		return filepath.Join(dir, strings.Replace(base, "identity", "recipient", 1))
	}
	return path + ".pub"
}

// privateFile reports whether only its owner, or root and a group this
// process belongs to, may read the file behind info.
func privateFile(info os.FileInfo) bool {
	perm := info.Mode().Perm()
	if perm&0o077 == 0 {
		return true
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || perm&0o037 != 0 || st.Uid != 0 {
		return false
	}
	groups, err := os.Getgroups()
	if err != nil {
		return false
	}
	return slices.Contains(append(groups, os.Getegid()), int(st.Gid))
}
