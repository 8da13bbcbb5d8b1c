package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/heteroflow/heteroflow/controlplane"
)

// PostgreSQL SQLSTATE codes the store maps (Appendix A of the manual).
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeSerialization       = "40001"
	codeDeadlock            = "40P01"
)

// mapErr turns driver errors into the domain's sentinels; this is the only
// place that knows pgx's error types.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return controlplane.ErrNotFound
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		// Constraint refusals are 409s the API shows as is: the server's
		// message names tables, columns and constraints, so it stays here.
		case pe.Code == codeUniqueViolation:
			return controlplane.ConflictExists()
		case pe.Code == codeForeignKeyViolation:
			return controlplane.ConflictReference()
		case pe.Code == codeSerialization, pe.Code == codeDeadlock:
			return fmt.Errorf("%w: a concurrent change came first; try again", controlplane.ErrConflict)
		case strings.HasPrefix(pe.Code, "22"): // data exception, e.g. a NUL byte in text
			return fmt.Errorf("%w: %s", controlplane.ErrInvalid, pe.Message)
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "53"), strings.HasPrefix(pe.Code, "57P"):
			// connection exception, insufficient resources, operator intervention
			return fmt.Errorf("%w: %s", controlplane.ErrUnavailable, pe.Message)
		}
		return err
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "closed pool") || strings.Contains(err.Error(), "conn closed") {
		return fmt.Errorf("%w: %v", controlplane.ErrUnavailable, err)
	}
	return err
}

func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeForeignKeyViolation
}
