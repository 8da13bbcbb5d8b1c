package hub

// Sealer seals secrets at rest (the members' API keys): a copy of the
// database alone does not reveal them. name is bound to the sealed value,
// so a value copied under another name does not open.
type Sealer interface {
	Seal(name string, plain []byte) string
	Open(name, sealed string) ([]byte, error)
}

// keyName is the name a member's API key is sealed under.
func keyName(cluster string) string { return "cluster.api_key/" + cluster }
