package server

import (
	"context"
	"fmt"
	"io"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// BootstrapAdmin is the username of the first administrator.
const BootstrapAdmin = "admin"

// bootstrapAdmin creates user "admin" when the store has no users. The
// password comes from password (HETEROFLOW_ADMIN_PASSWORD) or, if empty, is
// generated and written once to w (stderr); it is never logged.
func bootstrapAdmin(ctx context.Context, store controlplane.Store, svc *auth.Service, password string, w io.Writer) (bool, error) {
	n, err := store.CountUsers(ctx)
	if err != nil {
		return false, fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	generated := password == ""
	if generated {
		if password, err = auth.GeneratePassword(); err != nil {
			return false, err
		}
	}
	hash, err := svc.NewPasswordHash(password, BootstrapAdmin)
	if err != nil {
		// Printed at startup, before any console can translate it.
		return false, fmt.Errorf("%s: %w / %s 不符合密码策略（长度、字符类别、不含用户名）", EnvAdminPassword, err, EnvAdminPassword)
	}
	u := &controlplane.User{Username: BootstrapAdmin, DisplayName: "Administrator", Role: controlplane.RoleAdmin,
		Status: controlplane.UserActive, PasswordHash: hash}
	if err := store.CreateUser(ctx, u); err != nil {
		return false, fmt.Errorf("create bootstrap admin: %w", err)
	}
	if generated {
		fmt.Fprintf(w, "\n  HeteroFlow 初始管理员 / initial administrator\n    username: %s\n    password: %s\n"+
			"  此密码只显示这一次，请登录后修改。/ Shown only this once: log in and change it.\n\n", BootstrapAdmin, password)
	}
	return true, nil
}
