package alertapi

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/httpapi"
)

// Error codes of the alert API. Every 4xx it answers carries one of these
// (or a code of the rule, silence and channel checks: alert_rule_*,
// silence_*, channel_*) with the values its message names in params; the
// console shows each in both languages (web/src/i18n/alerts.*.ts, errors).
const (
	codeBadTime           = "alert_bad_time"
	codeBadDuration       = "alert_bad_duration"
	codeReasonRequired    = "alert_reason_required"
	codeRuleForbidden     = "alert_rule_forbidden"
	codeChannelTestFailed = "channel_test_failed"

	codeAlertNotFound   = "alert_not_found"
	codeAlertNotActive  = "alert_not_active"
	codeAlertResolved   = "alert_already_resolved"
	codeRuleNotFound    = "alert_rule_not_found"
	codeRuleExists      = "alert_rule_exists"
	codeSilenceNotFound = "silence_not_found"
	codeChannelNotFound = "channel_not_found"
	codeChannelExists   = "channel_exists"

	// Fallbacks for a domain error no check coded.
	codeInvalid   = "alert_invalid"
	codeForbidden = "alert_forbidden"
	codeNotFound  = "alert_missing"
	codeConflict  = "alert_conflict"
)

// opCodes names, per operation, the code of its not-found and conflict
// answers (the store reports those without knowing the operation).
var opCodes = map[string][2]string{
	"get-alert":            {codeAlertNotFound, ""},
	"ack-alert":            {codeAlertNotFound, codeAlertNotActive},
	"resolve-alert":        {codeAlertNotFound, codeAlertResolved},
	"create-alert-rule":    {"", codeRuleExists},
	"get-alert-rule":       {codeRuleNotFound, ""},
	"update-alert-rule":    {codeRuleNotFound, codeRuleExists},
	"delete-alert-rule":    {codeRuleNotFound, ""},
	"expire-silence":       {codeSilenceNotFound, ""},
	"create-alert-channel": {"", codeChannelExists},
	"update-alert-channel": {codeChannelNotFound, codeChannelExists},
	"delete-alert-channel": {codeChannelNotFound, ""},
	"test-alert-channel":   {codeChannelNotFound, ""},
}

// register is httpapi.Register with the handler's errors coded.
func register[I, O any](api *httpapi.API, op huma.Operation, acc httpapi.Access, h func(context.Context, *I) (*O, error)) {
	httpapi.Register(api, op, acc, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			return nil, codeOf(op.OperationID, in, err)
		}
		return out, nil
	})
}

// codeOf gives err a code unless it has one; server errors keep theirs
// (internal, unavailable).
func codeOf(opID string, in any, err error) error {
	var ce *controlplane.CodedError
	var ae *httpapi.APIError
	if errors.As(err, &ce) || errors.As(err, &ae) {
		return err
	}
	params := []string{"detail", strings.TrimPrefix(err.Error(), controlplane.ErrInvalid.Error()+": ")}
	if id, ok := inputID(in); ok {
		params = append(params, "id", strconv.FormatInt(id, 10))
	}
	if r, ok := in.(*ruleIn); ok {
		params = append(params, "name", r.Body.Name)
	} else if r, ok := in.(*updateRuleIn); ok {
		params = append(params, "name", r.Body.Name)
	}
	c := opCodes[opID]
	pick := func(specific, fallback string) string {
		if specific != "" {
			return specific
		}
		return fallback
	}
	switch {
	case errors.Is(err, controlplane.ErrNotFound):
		return controlplane.WithCode(err, controlplane.ErrNotFound, pick(c[0], codeNotFound), params...)
	case errors.Is(err, controlplane.ErrConflict):
		return controlplane.WithCode(err, controlplane.ErrConflict, pick(c[1], codeConflict), params...)
	case errors.Is(err, controlplane.ErrInvalid):
		return controlplane.WithCode(err, controlplane.ErrInvalid, codeInvalid, params...)
	case errors.Is(err, controlplane.ErrForbidden):
		return controlplane.WithCode(err, controlplane.ErrForbidden, codeForbidden, params...)
	}
	return err
}

// inputID is the path id of an operation's input, if it has one.
func inputID(in any) (int64, bool) {
	v := reflect.ValueOf(in)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, false
	}
	f := v.Elem().FieldByName("ID")
	if !f.IsValid() || f.Kind() != reflect.Int64 {
		return 0, false
	}
	return f.Int(), true
}
