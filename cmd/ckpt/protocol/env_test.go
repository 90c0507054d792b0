package protocol

import (
	"context"
	"os"
	"runtime"
	"testing"
)

// The environment a context carries answers every lookup OpenRemote
// makes, the last entry of a name winning; without one, the process's.
func TestGetenvReadsTheEnvironmentTheContextCarries(t *testing.T) {
	t.Setenv("CKPT_TEST_ENV_PROCESS", "process")
	get := getenv(WithEnvironment(context.Background(), []string{"AWS_REGION=eu-1", "K=a=b", "AWS_REGION=eu-2", "EMPTY="}))
	for name, want := range map[string]string{"AWS_REGION": "eu-2", "K": "a=b", "EMPTY": "", "CKPT_TEST_ENV_PROCESS": ""} {
		if got := get(name); got != want {
			t.Errorf("getenv(%q) = %q, want %q", name, got, want)
		}
	}
	if got, want := get("aws_region"), map[bool]string{true: "eu-2", false: ""}[runtime.GOOS == "windows"]; got != want {
		t.Errorf("getenv of the name in lower case = %q, want %q on %s", got, want, runtime.GOOS)
	}
	if got := getenv(context.Background())("CKPT_TEST_ENV_PROCESS"); got != os.Getenv("CKPT_TEST_ENV_PROCESS") || got != "process" {
		t.Errorf("getenv without an environment = %q, want the process's", got)
	}
}
