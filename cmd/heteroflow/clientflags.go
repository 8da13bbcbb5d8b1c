package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/heteroflow/heteroflow/controlplane/client"
)

// clientFlags are shared by the client commands: a server URL and an API
// key override the saved login (heteroflow login).
type clientFlags struct {
	server string
	apiKey string
	json   bool
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.server, "server", "", "server URL (default: the one saved by login; with --api-key $HETEROFLOW_SERVER); HA: several, comma-separated — a request that cannot reach one goes to the next / 服务器地址（默认为登录时保存的地址；使用 --api-key 时为 $HETEROFLOW_SERVER；高可用：逗号分隔多个，无法连接时切换到下一个）")
	cmd.PersistentFlags().StringVar(&f.apiKey, "api-key", os.Getenv("HETEROFLOW_API_KEY"), "API key hf_… (or HETEROFLOW_API_KEY) / API 密钥")
	cmd.PersistentFlags().BoolVar(&f.json, "json", false, "print JSON / 以 JSON 输出")
}

// client builds an API client from flags or saved credentials.
func (f *clientFlags) client() (*client.Client, error) {
	if f.apiKey != "" {
		// $HETEROFLOW_SERVER names the server as it does for login and
		// the agent, so a script can set it beside $HETEROFLOW_API_KEY.
		server := f.server
		if server == "" {
			server = os.Getenv("HETEROFLOW_SERVER")
		}
		if server == "" {
			return nil, fmt.Errorf("--server (or $HETEROFLOW_SERVER) is required with --api-key / 使用 --api-key 时必须指定 --server 或 $HETEROFLOW_SERVER")
		}
		c, err := client.New(server, nil)
		if err != nil {
			return nil, err
		}
		return c.WithAPIKey(f.apiKey), nil
	}
	path, err := client.DefaultCredentialsPath()
	if err != nil {
		return nil, err
	}
	cr, err := client.LoadCredentials(path)
	if err != nil {
		return nil, err
	}
	server := cr.Server
	if f.server != "" {
		// A malformed --server is named as such, not as another server.
		if _, err := client.New(f.server, nil); err != nil {
			return nil, err
		}
	}
	if f.server != "" && f.server != cr.Server {
		return nil, fmt.Errorf("saved login is for %s, not %s: log in again or pass --api-key / 已保存的登录属于 %s", cr.Server, f.server, cr.Server)
	}
	c, err := client.New(server, nil)
	if err != nil {
		return nil, err
	}
	return c.WithCredentials(cr, path), nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// listQuery is a list call's query: the filters that are set, and the page.
func listQuery(filters map[string]string, limit, offset int) url.Values {
	v := url.Values{}
	for k, val := range filters {
		if val != "" {
			v.Set(k, val)
		}
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	return v
}
