package main

import "github.com/heteroflow/heteroflow/cmd/heteroflow/servercmd"

func init() {
	rootCmd.AddCommand(servercmd.New(version))
}
