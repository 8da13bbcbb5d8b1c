package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/crypto/argon2"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Argon2Params are argon2id cost parameters. They are encoded into every hash
// (PHC string format), so raising them later does not break old hashes.
type Argon2Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultArgon2 follows the OWASP password storage recommendation for
// argon2id (19 MiB, 2 iterations, 1 lane): ~30 ms per hash on one core.
var DefaultArgon2 = Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
)

// HashPassword returns an argon2id PHC string: $argon2id$v=19$m=…,t=…,p=…$salt$key.
func HashPassword(password string, p Argon2Params) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// errBadHash: the stored hash is not one we wrote.
var errBadHash = errors.New("unrecognised password hash format")

// VerifyPassword reports whether password matches the PHC hash, in constant time.
func VerifyPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// PasswordPolicy is the rule set new passwords must meet.
type PasswordPolicy struct {
	MinLength int
	MaxLength int // argon2 takes any length; the cap stops hashing megabytes
	// MinClasses: how many of lower, upper, digit, other must appear.
	MinClasses int
}

// DefaultPolicy: 10+ characters from at least 3 classes (NIST 800-63B
// prefers length over composition; three classes stops "aaaaaaaaaa").
var DefaultPolicy = PasswordPolicy{MinLength: 10, MaxLength: 256, MinClasses: 3}

// Check returns an ErrInvalid naming every rule the password breaks, so a
// user fixes them in one go.
func (pp PasswordPolicy) Check(password, username string) error {
	var broken []string
	n := len([]rune(password))
	if n < pp.MinLength {
		broken = append(broken, fmt.Sprintf("password must be at least %d characters", pp.MinLength))
	}
	if pp.MaxLength > 0 && n > pp.MaxLength {
		broken = append(broken, fmt.Sprintf("password must be at most %d characters", pp.MaxLength))
	}
	var lower, upper, digit, other int
	for _, r := range password {
		switch {
		case unicode.IsLower(r):
			lower = 1
		case unicode.IsUpper(r):
			upper = 1
		case unicode.IsDigit(r):
			digit = 1
		default:
			other = 1
		}
	}
	if lower+upper+digit+other < pp.MinClasses {
		broken = append(broken, fmt.Sprintf("password must mix at least %d of: lower case, upper case, digits, symbols", pp.MinClasses))
	}
	if username != "" && strings.Contains(strings.ToLower(password), strings.ToLower(username)) {
		broken = append(broken, "password must not contain the username")
	}
	if len(broken) > 0 {
		return controlplane.Invalidf("%s", strings.Join(broken, "; "))
	}
	return nil
}

// GeneratePassword returns a random password that meets DefaultPolicy
// (used for the bootstrap admin when no password is configured).
func GeneratePassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random: %w", err)
	}
	// base64url gives letters, digits, '-' and '_'; the fixed suffix
	// guarantees every class regardless of the random draw.
	return base64.RawURLEncoding.EncodeToString(b) + "aZ9!", nil
}
