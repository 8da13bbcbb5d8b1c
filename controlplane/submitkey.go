package controlplane

import (
	"errors"
	"strconv"
	"strings"
)

// Idempotent submission, the same for a task, a workflow and a task the
// hub places: a request with an Idempotency-Key is answered with what an
// earlier request with that key made when the requests are the same (the
// stored hash matches), refused when they are not, and otherwise creates.
// The store's unique key on (owner, key) settles two requests racing
// through different servers: the loser's create is ErrConflict, and it
// answers with the winner's.

// KeyReused is the refusal of a key used before with another request
// (409 idempotency_key_reused); param names what the key made (task,
// workflow, hub_task), what says it in the message.
func KeyReused(param, what string, id int64) error {
	return Coded(ErrConflict, "idempotency_key_reused", []string{param, strconv.FormatInt(id, 10)},
		"Idempotency-Key already used for %s %d with a different request", what, id)
}

// SubmitOnce runs one idempotent submission. replay answers the key when
// an earlier request holds it (found false when none does, or an error
// such as KeyReused); create makes the object. Without a key, create
// alone runs. replayed reports that the answer is an earlier request's.
func SubmitOnce[T any](key *SubmitKey, replay func() (out T, found bool, err error), create func() (T, error)) (out T, replayed bool, err error) {
	if key != nil {
		if out, found, err := replay(); found || err != nil {
			return out, found, err
		}
	}
	out, err = create()
	if key != nil && errors.Is(err, ErrConflict) {
		// The same key raced in through another request or server.
		if again, found, rerr := replay(); found || rerr != nil {
			return again, found, rerr
		}
	}
	return out, false, err
}

// ReservedLabelPrefix starts the labels HeteroFlow sets on tasks itself:
// the workflow and step a task belongs to, the hub task and owner it was
// forwarded for.
const ReservedLabelPrefix = "heteroflow."

// CheckUnreservedLabels refuses a label under ReservedLabelPrefix (400
// label_reserved), so that a task cannot pass for a workflow's step or
// another user's forwarded task.
func CheckUnreservedLabels(labels map[string]string) error {
	for k := range labels {
		if strings.HasPrefix(k, ReservedLabelPrefix) {
			return InvalidCode("label_reserved", []string{"label", k},
				"label %q: the %s prefix is reserved for labels HeteroFlow sets itself", k, ReservedLabelPrefix)
		}
	}
	return nil
}
