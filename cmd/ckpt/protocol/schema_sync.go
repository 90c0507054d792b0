package protocol

import "github.com/ckpt/ckpt/engine"

type RemoteJSON struct {
	Name          string `json:"name"`
	URL           string `json:"url"`
	KeyFile       string `json:"key_file,omitempty"`
	PassphraseEnv string `json:"passphrase_env,omitempty"`
}

func RemoteView(r engine.RemoteInfo) RemoteJSON {
	return RemoteJSON{Name: r.Name, URL: r.URL, KeyFile: r.Key.KeyFile, PassphraseEnv: r.Key.PassphraseEnv}
}

type RemotesJSON struct {
	Remotes []RemoteJSON `json:"remotes"`
}

// TrafficJSON is what a sync sent and read.
type TrafficJSON struct {
	Puts       int64 `json:"puts"`
	Gets       int64 `json:"gets"`
	Stats      int64 `json:"stats"`
	BytesUp    int64 `json:"bytes_up"`
	BytesDown  int64 `json:"bytes_down"`
	ObjectsUp  int64 `json:"objects_up"`
	SegmentsUp int64 `json:"segments_up"`
}

func TrafficView(t engine.SyncTraffic) TrafficJSON { return TrafficJSON(t) }

// SyncJSON are the fields push and pull reports share.
type SyncJSON struct {
	Remote      string `json:"remote"`
	Task        string `json:"task"`
	Head        string `json:"head"`
	Checkpoints int    `json:"checkpoints"`
}

type PushJSON struct {
	SyncJSON
	UpToDate   bool        `json:"up_to_date"`
	Behind     bool        `json:"behind"`
	Forked     string      `json:"forked,omitempty"`
	Traffic    TrafficJSON `json:"traffic"`
	DurationMs int64       `json:"duration_ms"`
}

type PullJSON struct {
	SyncJSON
	Trees      int         `json:"trees"`
	Blobs      int         `json:"blobs"`
	Moved      bool        `json:"moved"`
	Traffic    TrafficJSON `json:"traffic"`
	DurationMs int64       `json:"duration_ms"`
}

type CloneJSON struct {
	Remote      string      `json:"remote"`
	URL         string      `json:"url"`
	Task        string      `json:"task"`
	Head        string      `json:"head"`
	Workspace   string      `json:"workspace"`
	Checkpoints int         `json:"checkpoints"`
	Written     int         `json:"written"`
	Conflicts   int         `json:"conflicts"`
	Fetched     int         `json:"fetched"`
	Traffic     TrafficJSON `json:"traffic"`
	DurationMs  int64       `json:"duration_ms"`
}

// RemoteGCJSON is gc --remote's JSON shape.
type RemoteGCJSON struct {
	Remote       string      `json:"remote"`
	Tasks        int         `json:"tasks"`
	Dropped      int         `json:"dropped"`
	Marked       int         `json:"marked"`
	Deleted      int         `json:"deleted"`
	DeletedBytes int64       `json:"deleted_bytes"`
	Traffic      TrafficJSON `json:"traffic"`
	DurationMs   int64       `json:"duration_ms"`
}
