package ixsmireceiver

// fuzzSeeds are small hand-made edge cases; fuzz_test.go adds every
// testdata fixture as a seed too.
var fuzzSeeds = []string{"", "|", "+---+\n| 0 | x |\n", "{\"card0\":{}}", "NPU ID : 0\n\nChip ID : 0\n"}
