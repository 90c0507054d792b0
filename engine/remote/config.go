package remote

import (
	"path/filepath"
	"time"
)

// Config holds what an s3:// remote needs besides its URL: where the
// service is and who is calling. A file:// remote ignores it.
type Config struct {
	// Endpoint is the service's base URL, such as http://127.0.0.1:8333
	// or https://<account>.r2.cloudflarestorage.com; "" means AWS S3.
	Endpoint string
	// Region is the bucket's region; "" asks the service.
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken are static
	// credentials. When AccessKeyID is "", the credentials come from
	// Profile in SharedCredentialsFile, or the calls are anonymous when
	// that file does not exist.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Profile names the section of SharedCredentialsFile to use; ""
	// means "default".
	Profile               string
	SharedCredentialsFile string
	// PartSize is the size of the parts of a multipart upload, used for
	// objects larger than it; 0 lets the client choose (at least 16 MiB).
	// S3 requires at least 5 MiB.
	PartSize uint64
	// ReadStall bounds the wait for the next bytes of an object being
	// read: a read that receives nothing for this long fails with an error
	// wrapping ErrStalled. 0 (or less) means one minute, the client's wait
	// for a response's headers.
	ReadStall time.Duration
}

// ConfigFromEnv reads the standard AWS variables through getenv (os.Getenv
// in a program; a map lookup in a test):
//
//	AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL   Endpoint
//	AWS_REGION, else AWS_DEFAULT_REGION          Region
//	AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//	AWS_SESSION_TOKEN                            static credentials
//	AWS_PROFILE                                  Profile
//	AWS_SHARED_CREDENTIALS_FILE, else
//	$HOME/.aws/credentials (%USERPROFILE% on
//	Windows)                                     SharedCredentialsFile
func ConfigFromEnv(getenv func(string) string) Config {
	first := func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	cfg := Config{
		Endpoint:              first("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
		Region:                first("AWS_REGION", "AWS_DEFAULT_REGION"),
		AccessKeyID:           getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey:       getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:          getenv("AWS_SESSION_TOKEN"),
		Profile:               getenv("AWS_PROFILE"),
		SharedCredentialsFile: getenv("AWS_SHARED_CREDENTIALS_FILE"),
	}
	if home := first("HOME", "USERPROFILE"); cfg.SharedCredentialsFile == "" && home != "" {
		cfg.SharedCredentialsFile = filepath.Join(home, ".aws", "credentials")
	}
	return cfg
}
