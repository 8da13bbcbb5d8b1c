package httpapi

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Doc describes a plain net/http route (mounted with Handle or HandleStream)
// in the OpenAPI document, so that every route of the API, not only those
// registered through huma, has its request and response schemas there and a
// client generated from the document can call it.
type Doc struct {
	ID      string // operationId, unique in the document
	Summary string
	Tags    []string
	// Query names the query parameters the handler reads (documented as
	// strings; the handler validates them).
	Query []string
	// Request is a value of the JSON body type (nil: no body). RequestType
	// overrides the media type for non-JSON bodies (e.g. protobuf).
	Request     any
	RequestType string
	// Response is a value of the success body type (nil: no body);
	// ResponseType overrides the media type (e.g. text/plain).
	Response     any
	ResponseType string
	Status       int   // success status, 200 by default
	Errors       []int // error statuses besides 400/401/403 for guarded routes
}

var pathParam = regexp.MustCompile(`\{([^}/]+)\}`)

// Document describes the route already mounted at method+pattern (with
// Handle or HandleStream, or an endpoint inside a Mount-ed subtree, whose
// full path is given) in the OpenAPI document. The route-walk test fails for
// a route that is never documented. Documenting a route that does not exist
// is a programming error and panics.
func (a *API) Document(method, pattern string, d Doc) {
	acc, ok := a.accessOf(method, pattern)
	if !ok {
		panic(fmt.Sprintf("httpapi: Document(%s %s): no such route", method, pattern))
	}
	a.document(method, pattern, acc, d)
}

// accessOf finds the access rule of a recorded route, or of the mounted
// subtree that contains pattern.
func (a *API) accessOf(method, pattern string) (Access, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.routes {
		if r.Method == method && r.Path == pattern {
			return r.Access, true
		}
		if r.Method == "*" && strings.HasPrefix(pattern, strings.TrimSuffix(r.Path, "*")) {
			return r.Access, true
		}
	}
	return Access{}, false
}

// document adds d as an operation at method+pattern of the OpenAPI document.
func (a *API) document(method, pattern string, acc Access, d Doc) {
	oapi := a.huma.OpenAPI()
	schema := func(v any, hint string) *huma.Schema {
		return oapi.Components.Schemas.Schema(reflect.TypeOf(v), true, hint)
	}
	op := &huma.Operation{OperationID: d.ID, Method: method, Path: pattern, Summary: d.Summary, Tags: d.Tags}
	if op.OperationID == "" {
		panic(fmt.Sprintf("httpapi: documented route %s %s needs an ID", method, pattern))
	}
	for _, m := range pathParam.FindAllStringSubmatch(pattern, -1) {
		op.Parameters = append(op.Parameters, &huma.Param{Name: m[1], In: "path", Required: true, Schema: &huma.Schema{Type: huma.TypeString}})
	}
	for _, q := range d.Query {
		op.Parameters = append(op.Parameters, &huma.Param{Name: q, In: "query", Schema: &huma.Schema{Type: huma.TypeString}})
	}
	if d.Request != nil || d.RequestType != "" {
		ct := d.RequestType
		if ct == "" {
			ct = "application/json"
		}
		mt := &huma.MediaType{}
		if d.Request != nil && ct == "application/json" {
			mt.Schema = schema(d.Request, pascal(d.ID)+"Request")
		} else {
			mt.Schema = &huma.Schema{Type: huma.TypeString, Format: "binary"}
		}
		op.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{ct: mt}}
	}
	status := d.Status
	if status == 0 {
		status = http.StatusOK
	}
	ok := &huma.Response{Description: http.StatusText(status)}
	if d.Response != nil || d.ResponseType != "" {
		ct := d.ResponseType
		if ct == "" {
			ct = "application/json"
		}
		mt := &huma.MediaType{}
		if d.Response != nil && ct == "application/json" {
			mt.Schema = schema(d.Response, pascal(d.ID)+"Response")
		} else {
			mt.Schema = &huma.Schema{Type: huma.TypeString}
		}
		ok.Content = map[string]*huma.MediaType{ct: mt}
	}
	op.Responses = map[string]*huma.Response{fmt.Sprint(status): ok}
	errs := d.Errors
	if !acc.Public {
		op.Security = []map[string][]string{{"bearer": {}}}
		op.Description = fmt.Sprintf("Requires: %s.", acc)
		errs = append([]int{http.StatusUnauthorized, http.StatusForbidden}, errs...)
	}
	errs = append([]int{http.StatusBadRequest}, errs...)
	errSchema := schema(APIError{}, "Error")
	for _, code := range errs {
		op.Responses[fmt.Sprint(code)] = &huma.Response{Description: http.StatusText(code),
			Content: map[string]*huma.MediaType{"application/json": {Schema: errSchema}}}
	}
	oapi.AddOperation(op)
}

// pascal turns an operation id such as "list-nodes" into "ListNodes" for
// schema names.
func pascal(id string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
