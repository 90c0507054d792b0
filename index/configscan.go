package index

// EachConfig calls fn with every store setting whose key starts with
// prefix, in ascending key order. An error from fn stops the scan and is
// returned.
func (db *DB) EachConfig(prefix string, fn func(key, value string) error) error {
	return db.scan(stringKey(prefixConfig, prefix), func(k, v []byte) error {
		return fn(string(k[1:]), string(v))
	})
}

// DeleteConfig removes the store setting key; removing an unset key is a
// no-op.
func (b *Batch) DeleteConfig(key string) {
	b.del(stringKey(prefixConfig, key))
}
