package remote

import (
	"path/filepath"
	"testing"
)

func TestConfigFromEnvFollowsTheAWSConventions(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://127.0.0.1:1",
		"AWS_ENDPOINT_URL_S3":   "http://127.0.0.1:2",
		"AWS_DEFAULT_REGION":    "eu-west-1",
		"AWS_ACCESS_KEY_ID":     "id",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN":     "token",
		"AWS_PROFILE":           "work",
		"HOME":                  "/home/u",
	}
	got := ConfigFromEnv(func(k string) string { return env[k] })
	want := Config{
		Endpoint: "http://127.0.0.1:2", Region: "eu-west-1",
		AccessKeyID: "id", SecretAccessKey: "secret", SessionToken: "token",
		Profile: "work", SharedCredentialsFile: filepath.Join("/home/u", ".aws", "credentials"),
	}
	if got != want {
		t.Fatalf("ConfigFromEnv = %+v\nwant %+v", got, want)
	}
	env["AWS_REGION"] = "us-east-2"
	env["AWS_SHARED_CREDENTIALS_FILE"] = "/etc/creds"
	delete(env, "AWS_ENDPOINT_URL_S3")
	got = ConfigFromEnv(func(k string) string { return env[k] })
	if got.Region != "us-east-2" || got.SharedCredentialsFile != "/etc/creds" || got.Endpoint != "http://127.0.0.1:1" {
		t.Fatalf("ConfigFromEnv = %+v", got)
	}
	if got := ConfigFromEnv(func(string) string { return "" }); got != (Config{}) {
		t.Fatalf("ConfigFromEnv of an empty environment = %+v", got)
	}
}
