package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// The task sandbox. A task never inherits the agent's environment, user or
// working directory:
//
//   - environment: only DefaultTaskPath, HOME (the task's working
//     directory), LANG, USER/LOGNAME, the HETEROFLOW_* variables, the
//     variables named in Config.PassEnv, then the task's env and secret_env,
//     then the isolation and visible-device variables (which always win);
//   - account: Config.RunAs, or a tenant/user mapping (Config.Accounts); an
//     agent running as root with nothing configured runs tasks as
//     DefaultRunAs; uid 0 only with Config.AllowRoot;
//   - working directory: WorkDir/<task>-<attempt>, mode 0700, owned by the
//     task's account, removed when the task ends;
//   - the agent's own files (credentials, keys, outbox, state, logs) stay
//     0600/0700 and owned by the agent's user, so the task cannot read them.

// DefaultRunAs is the account tasks run as when the agent runs as root and
// neither --run-as nor a mapping names one. It exists on every Linux
// system; a dedicated account (the deploy script creates heteroflow-task)
// is better, because tasks as nobody share a uid with other nobody daemons.
const DefaultRunAs = "nobody"

// DefaultTaskPath is the PATH a task gets unless its env sets one.
const DefaultTaskPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// defaultLang is LANG unless the task sets it (UTF-8 everywhere, no locale
// package needed).
const defaultLang = "C.UTF-8"

// Identity is the local account a task runs as.
type Identity struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups
	// Switch is true when the task must change to this identity (the agent
	// runs as root); false when the task keeps the agent's own account.
	Switch bool
}

// LookupAccount resolves a user name or numeric uid. A numeric uid without
// a passwd entry runs with gid = uid and no supplementary groups.
func LookupAccount(name string) (Identity, error) {
	var u *user.User
	var err error
	if n, perr := strconv.ParseUint(name, 10, 32); perr == nil {
		u, err = user.LookupId(name)
		if err != nil {
			return Identity{Name: name, UID: uint32(n), GID: uint32(n)}, nil
		}
	} else {
		u, err = user.Lookup(name)
		if err != nil {
			return Identity{}, fmt.Errorf("run-as account %q: %w", name, err)
		}
	}
	id := Identity{Name: u.Username}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return Identity{}, fmt.Errorf("run-as account %q: non-numeric uid/gid", name)
	}
	id.UID, id.GID = uint32(uid), uint32(gid)
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(n) != id.GID {
				id.Groups = append(id.Groups, uint32(n))
			}
		}
	}
	return id, nil
}

// AccountFor returns the account name configured for spec: a "user:<owner>"
// mapping first, then "tenant:<tenant>", then runAs (may be empty).
func AccountFor(spec protocol.TaskSpec, runAs string, accounts map[string]string) string {
	if spec.Owner != "" {
		if a, ok := accounts["user:"+spec.Owner]; ok {
			return a
		}
	}
	if spec.Tenant != "" {
		if a, ok := accounts["tenant:"+spec.Tenant]; ok {
			return a
		}
	}
	return runAs
}

// ValidateAccounts checks a mapping's keys (user:NAME or tenant:NAME) and
// that every named account exists, so a typo fails at agent start rather
// than at the first task of that tenant.
func ValidateAccounts(runAs string, accounts map[string]string, allowRoot bool) error {
	var errs []error
	check := func(what, acct string) {
		id, err := LookupAccount(acct)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			return
		}
		if id.UID == 0 && !allowRoot {
			errs = append(errs, fmt.Errorf("%s: account %q is root; tasks never run as root unless allowed (--allow-root-tasks)", what, acct))
		}
		if os.Geteuid() != 0 && int(id.UID) != os.Geteuid() {
			errs = append(errs, fmt.Errorf("%s: the agent does not run as root, so it cannot run tasks as %q", what, acct))
		}
	}
	if runAs != "" {
		check("--run-as", runAs)
	}
	keys := make([]string, 0, len(accounts))
	for k := range accounts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kind, name, ok := strings.Cut(k, ":")
		if !ok || name == "" || (kind != "user" && kind != "tenant") {
			errs = append(errs, fmt.Errorf("--run-as-map %q: the key must be user:NAME or tenant:NAME", k))
			continue
		}
		check("--run-as-map "+k, accounts[k])
	}
	return errors.Join(errs...)
}

// identity resolves the account spec runs as, with the device groups its
// devices need (AMD/Hygon: video and render, which own /dev/kfd and /dev/dri).
func (r *Runner) identity(spec protocol.TaskSpec) (Identity, error) {
	acct := AccountFor(spec, r.cfg.RunAs, r.cfg.Accounts)
	root := os.Geteuid() == 0
	if acct == "" {
		if !root {
			// Nothing to switch to: the task keeps the agent's account.
			return Identity{Name: currentUserName(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}, nil
		}
		acct = DefaultRunAs
	}
	id, err := LookupAccount(acct)
	if err != nil {
		return Identity{}, err
	}
	if id.UID == 0 && !r.cfg.AllowRoot {
		return Identity{}, fmt.Errorf("refusing to run the task as root (account %q); the node must allow it (--allow-root-tasks)", acct)
	}
	if !root {
		if int(id.UID) != os.Geteuid() {
			return Identity{}, fmt.Errorf("the agent does not run as root, so it cannot run the task as %q", acct)
		}
		return id, nil
	}
	id.Switch = true
	for _, d := range spec.Devices {
		if d.Vendor == inventory.VendorAMD || d.Vendor == inventory.VendorHygon {
			for _, g := range []string{"video", "render"} {
				if gr, err := user.LookupGroup(g); err == nil {
					if n, err := strconv.ParseUint(gr.Gid, 10, 32); err == nil && !containsGID(id.Groups, uint32(n)) {
						id.Groups = append(id.Groups, uint32(n))
					}
				}
			}
		}
	}
	return id, nil
}

func containsGID(gs []uint32, g uint32) bool {
	for _, x := range gs {
		if x == g {
			return true
		}
	}
	return false
}

func currentUserName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return strconv.Itoa(os.Getuid())
}

// TaskEnv builds a task's whole environment (see the package comment on the
// sandbox): base variables, PassEnv from the agent, the task's env, its
// secret_env, then isolation and visibility variables and HETEROFLOW_*.
// For a container the image keeps its own PATH and LANG.
func TaskEnv(spec protocol.TaskSpec, id Identity, workDir string, passEnv []string, isolation, visibility map[string]string, container bool) map[string]string {
	env := map[string]string{
		"HOME":    workDir,
		"USER":    id.Name,
		"LOGNAME": id.Name,
	}
	if !container {
		env["PATH"] = DefaultTaskPath
		env["LANG"] = defaultLang
	}
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for _, m := range []map[string]string{spec.Env, spec.SecretEnv, isolation, visibility} {
		for k, v := range m {
			env[k] = v
		}
	}
	env["HETEROFLOW_TASK_ID"] = strconv.FormatInt(spec.TaskID, 10)
	env["HETEROFLOW_ATTEMPT"] = strconv.Itoa(spec.Attempt)
	env["HETEROFLOW_WORK_DIR"] = workDir
	env[protocol.OutputsEnv] = filepath.Join(workDir, OutputsFile)
	return env
}

// EnvList turns env into sorted KEY=VALUE strings.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// makeWorkDir creates the task's working directory, 0700 and owned by id.
// A leftover directory of the same name (an earlier start of this attempt)
// is removed first, so nothing in it can be a planted link.
func makeWorkDir(root, name string, id Identity) (string, error) {
	// The root is traversable (0711) but not listable: the account reaches
	// its own directory without seeing the others.
	if err := os.MkdirAll(root, 0o711); err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	if err := os.Chmod(root, 0o711); err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	if id.Switch {
		if err := reachable(root, id); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(root, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	if id.Switch {
		if err := os.Lchown(dir, int(id.UID), int(id.GID)); err != nil {
			os.Remove(dir)
			return "", fmt.Errorf("work dir: %w", err)
		}
	}
	return dir, nil
}

// reachable checks that id may traverse every folder from / down to dir,
// so a task fails to start with this reason rather than a bare chdir error.
func reachable(dir string, id Identity) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := abs; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("work dir: %w", err)
		}
		if !canTraverse(st, id) {
			return fmt.Errorf("the task account %s cannot enter %s (mode %04o): the agent's data folder and its parents must be traversable by others (chmod o+x) / 任务账户无法进入该目录",
				id.Name, p, st.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// collectOutputs copies the outputs file the task wrote in its working
// directory into its private log folder, where ReadOutputs finds it after
// the working directory is gone. The task owns the file, so it is opened
// without following a link and only if it is a regular file: a link to
// /etc/shadow must not turn into task outputs read with the agent's rights.
func collectOutputs(workDir, logDir string) error {
	f, err := os.OpenFile(filepath.Join(workDir, OutputsFile), os.O_RDONLY|openNoFollow, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("outputs: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("outputs: %w", err)
	}
	if !st.Mode().IsRegular() {
		return errors.New("outputs: not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, protocol.MaxOutputsBytes+1))
	if err != nil {
		return fmt.Errorf("outputs: %w", err)
	}
	return writeFileAtomic(filepath.Join(logDir, OutputsFile), b)
}

// lookPath finds file on the task's PATH (not the agent's), like a shell
// started with the task's environment would.
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on the task's PATH (%s)", file, path)
}
