package protocol

import (
	"context"
	"errors"
	"fmt"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/engine/remote"
)

// PickRemote returns the remote a push or pull names, or the default:
// "origin", or the store's only remote.
func PickRemote(ctx context.Context, e *engine.Engine, args []string) (engine.RemoteInfo, error) {
	rs, err := e.Remotes(ctx)
	if err != nil {
		return engine.RemoteInfo{}, err
	}
	want := ""
	if len(args) > 0 {
		want = args[0]
	}
	for _, r := range rs {
		if r.Name == want || (want == "" && (r.Name == "origin" || len(rs) == 1)) {
			return r, nil
		}
	}
	if want == "" {
		return engine.RemoteInfo{}, UsageError("no remote given and no remote named origin (`ckpt remote add NAME URL`)")
	}
	return engine.RemoteInfo{}, UsageError(fmt.Sprintf("no remote %q (`ckpt remote list` lists them)", want))
}

// RunPush pushes task to the remote args name (or the default remote);
// the CLI and the push method share it.
func RunPush(ctx context.Context, e *engine.Engine, args []string, task string, progress func(engine.SyncProgress)) (PushJSON, *engine.PushResult, error) {
	r, b, err := RemoteBackend(ctx, e, args)
	if err != nil {
		return PushJSON{}, nil, err
	}
	defer b.Close()
	res, err := e.Push(ctx, b, engine.PushOptions{Remote: r.Name, Task: task, Progress: progress})
	if err != nil {
		return PushJSON{}, nil, err
	}
	return PushJSON{SyncJSON: SyncJSON{Remote: r.Name, Task: res.Task, Head: res.Head.String(), Checkpoints: res.Checkpoints},
		UpToDate: res.UpToDate, Behind: res.Behind, Forked: res.Forked, Traffic: TrafficView(res.Traffic),
		DurationMs: res.Duration.Milliseconds()}, res, nil
}

// RemoteBackend picks the remote args name and opens its backend.
func RemoteBackend(ctx context.Context, e *engine.Engine, args []string) (engine.RemoteInfo, engine.Backend, error) {
	r, err := PickRemote(ctx, e, args)
	if err != nil {
		return r, nil, err
	}
	b, err := OpenRemote(ctx, r)
	return r, b, err
}

// RunPull pulls task from the remote args name (or the default remote);
// the CLI and the pull method share it.
func RunPull(ctx context.Context, e *engine.Engine, args []string, task string, progress func(engine.SyncProgress)) (PullJSON, error) {
	r, b, err := RemoteBackend(ctx, e, args)
	if err != nil {
		return PullJSON{}, err
	}
	defer b.Close()
	res, err := e.Pull(ctx, b, engine.PullOptions{Remote: r.Name, Task: task, Progress: progress})
	if errors.Is(err, engine.ErrDiverged) {
		return PullJSON{}, fmt.Errorf("%w (push keeps this store's history as a new task; `ckpt drop %s` then pull takes the remote's)", err, task)
	}
	if err != nil {
		return PullJSON{}, err
	}
	return PullJSON{SyncJSON: SyncJSON{Remote: r.Name, Task: res.Task, Head: res.Head.String(), Checkpoints: res.Checkpoints},
		Trees: res.Trees, Blobs: res.Blobs, Moved: res.Moved, Traffic: TrafficView(res.Traffic),
		DurationMs: res.Duration.Milliseconds()}, nil
}

// syncParams are the params of the push and pull methods.
type syncParams struct {
	Remote string `json:"remote,omitempty" jsonschema:"the remote's name (default: origin, or the only remote)"`
	Task   string `json:"task,omitempty" jsonschema:"the task (default: the session's)"`
}

func (p syncParams) args() []string {
	if p.Remote == "" {
		return nil
	}
	return []string{p.Remote}
}

func (h *host) push(ctx context.Context, p syncParams) (PushJSON, error) {
	view, _, err := RunPush(ctx, h.e, p.args(), h.task(p.Task), nil)
	return view, err
}

func (h *host) pull(ctx context.Context, p syncParams) (PullJSON, error) {
	return RunPull(ctx, h.e, p.args(), h.task(p.Task), nil)
}

// OpenRemote opens a remote's backend, with the endpoint, region and
// credentials of the standard AWS_* variables (never stored), and for an
// encrypted remote sealed with the key its record points to: the key
// file, or the passphrase read now from the variable it names. The
// variables are the process's, or those of the environment ctx carries
// (WithEnvironment).
func OpenRemote(ctx context.Context, r engine.RemoteInfo) (engine.Backend, error) {
	getenv := getenv(ctx)
	b, err := remote.Open(ctx, r.URL, remote.ConfigFromEnv(getenv))
	if err != nil {
		return nil, UsageError(err.Error())
	}
	if !r.Key.Encrypted() {
		return b, nil
	}
	secret, err := remoteSecret(r.Key, getenv)
	if err == nil {
		var sealed engine.Backend
		if sealed, err = engine.EncryptRemote(ctx, b, secret); err == nil {
			return sealed, nil
		}
	}
	b.Close()
	return nil, err
}

// remoteSecret resolves how a remote is keyed into its secret: the key
// file's path, or the passphrase in the variable named, read with getenv.
func remoteSecret(k engine.RemoteKey, getenv func(string) string) (engine.RemoteSecret, error) {
	if k.KeyFile != "" {
		return engine.RemoteSecret{KeyFile: k.KeyFile}, nil
	}
	pass := getenv(k.PassphraseEnv)
	if pass == "" {
		return engine.RemoteSecret{}, UsageError(fmt.Sprintf("the remote is encrypted with the passphrase in $%s, which is empty or unset", k.PassphraseEnv))
	}
	return engine.RemoteSecret{Passphrase: []byte(pass)}, nil
}
