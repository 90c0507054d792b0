// Package remote is ckpt's object-storage layer: a small Backend interface
// for what push and pull need (whole-object puts with optional conditions,
// whole and ranged reads, stat, paged listing by prefix, delete), and two
// implementations chosen by the scheme of a remote's URL:
//
//   - file:///path, a directory (a local disk or a network mount). Each
//     object is one file written to a temporary name, fsynced and renamed
//     into place; its ETag is a BLAKE3 hash of its content, kept in a small
//     header of the file so that Stat never rereads the content.
//     Conditional puts take a per-key advisory lock, so they are safe
//     across processes and, where the mount honours flock (NFS does through
//     POSIX locks), across machines.
//
//   - s3://bucket/prefix, any S3-compatible service (AWS S3, R2, GCS's S3
//     API, MinIO, SeaweedFS), through github.com/minio/minio-go/v7.
//     minio-go was chosen over the AWS SDK for Go v2 because it is one
//     module with a handful of small dependencies where the SDK is a tree of
//     per-service modules (smithy-go, the internal config, credentials and
//     signing modules, the S3 manager for multipart); because it talks to
//     S3-compatible servers by default (path-style addressing for custom
//     endpoints, no AWS-only checksum headers that other servers reject); and
//     because it streams multipart uploads of known size itself. Conditional
//     puts map to the standard If-None-Match: * and If-Match: <etag> headers.
//
// The package never reads environment variables: ConfigFromEnv turns the
// standard AWS_* variables into a Config when the caller hands it a getenv
// function, and Open takes that Config.
//
// Keys are slash-separated UTF-8 paths; see ValidKey for the rules that keep
// a key portable between object stores and file systems. The conformance
// suite in package remotetest states, as tests, what every Backend
// guarantees.
//
// # Stability
//
// remote is a public package: Backend, Condition, ObjectInfo, Open and
// Config keep their meaning within a major version of the module, so a
// host may implement a Backend of its own and check it with the
// conformance suite (remote/remotetest); a method is added to Backend only
// with a new major version.
package remote
