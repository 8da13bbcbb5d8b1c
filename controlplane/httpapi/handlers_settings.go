package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// RegistrationSetting is the settings key of the self-registration switch;
// while unset, Options.AllowRegistration (from the server config) applies.
const RegistrationSetting = "registration.enabled"

// RegistrationJSON is the self-registration switch.
type RegistrationJSON struct {
	Enabled bool `json:"enabled"`
}

type putRegistrationIn struct {
	Body RegistrationJSON
}

func (a *API) registerSettings() {
	tags := []string{"settings"}
	Register(a, huma.Operation{OperationID: "get-registration", Method: http.MethodGet, Path: Prefix + "/settings/registration",
		Summary: "Is self-registration enabled", Tags: tags}, Perm(auth.ResSettings, auth.ActRead), a.getRegistration)
	Register(a, huma.Operation{OperationID: "put-registration", Metadata: Audited("settings.registration"), Method: http.MethodPut, Path: Prefix + "/settings/registration",
		Summary: "Enable or disable self-registration", Tags: tags}, Perm(auth.ResSettings, auth.ActWrite), a.putRegistration)
}

func (a *API) registrationEnabled(ctx context.Context) (bool, error) {
	v, err := a.store.GetSetting(ctx, RegistrationSetting)
	if errors.Is(err, controlplane.ErrNotFound) {
		return a.opts.AllowRegistration, nil
	}
	if err != nil {
		return false, err
	}
	return v == "true", nil
}

func (a *API) getRegistration(ctx context.Context, _ *struct{}) (*Body[RegistrationJSON], error) {
	on, err := a.registrationEnabled(ctx)
	if err != nil {
		return nil, err
	}
	return &Body[RegistrationJSON]{Body: RegistrationJSON{Enabled: on}}, nil
}

func (a *API) putRegistration(ctx context.Context, in *putRegistrationIn) (*Body[RegistrationJSON], error) {
	SetAudit(ctx, "settings.registration", "settings/registration")
	SetAuditDetail(ctx, "enabled="+strconv.FormatBool(in.Body.Enabled))
	if err := a.store.PutSetting(ctx, RegistrationSetting, strconv.FormatBool(in.Body.Enabled)); err != nil {
		return nil, err
	}
	return &Body[RegistrationJSON]{Body: in.Body}, nil
}
