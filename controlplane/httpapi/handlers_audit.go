package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

type listAuditIn struct {
	PageParams
	Module controlplane.AuditModule `query:"module" enum:"api,auth,scheduler,agent,plugin" doc:"Only this module"`
	Level  controlplane.AuditLevel  `query:"level" enum:"DEBUG,INFO,WARN,ERROR" doc:"Only this level"`
	Actor  string                   `query:"actor" maxLength:"128"`
	Since  string                   `query:"since" doc:"At or after (RFC 3339)"`
	Until  string                   `query:"until" doc:"Before (RFC 3339)"`
	Q      string                   `query:"q" maxLength:"256" doc:"Keyword in action, target, actor or detail"`
}

func (a *API) registerAudit() {
	Register(a, huma.Operation{OperationID: "list-audit", Method: http.MethodGet, Path: Prefix + "/audit",
		Summary: "Query the audit log", Tags: []string{"audit"}}, Perm(auth.ResAudit, auth.ActRead), a.listAudit)
}

func (a *API) listAudit(ctx context.Context, in *listAuditIn) (*Body[*List[AuditJSON]], error) {
	f := controlplane.AuditFilter{Module: in.Module, Level: in.Level, Actor: in.Actor, Query: in.Q, Page: in.page()}
	var err error
	if f.Since, err = parseTime("since", in.Since); err != nil {
		return nil, err
	}
	if f.Until, err = parseTime("until", in.Until); err != nil {
		return nil, err
	}
	rows, total, err := a.store.ListAudit(ctx, f)
	if err != nil {
		return nil, err
	}
	return &Body[*List[AuditJSON]]{Body: newList(rows, total, f.Page, auditJSON)}, nil
}
