package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/heteroflow/heteroflow/scheduler/framework"
	"github.com/heteroflow/heteroflow/scheduler/model"
	"github.com/heteroflow/heteroflow/scheduler/plugins"
)

func TestZZAnalysis(t *testing.T) {
	T := "/work/shared/trace/"
	nodes, _ := LoadNodes(T + "openb_node_list_gpu_node.csv")
	tasks, _ := LoadTasks(T + "openb_pod_list_default.csv")
	prof, _ := LoadProfile("default")
	cl, _ := model.NewCluster(1)
	for _, n := range nodes {
		cl.AddNode(n)
	}
	fw, _ := framework.New(plugins.Registry(), prof, cl, framework.Options{Seed: 42})
	p, _ := fw.Plugin("Fragmentation")
	p.(*plugins.Fragmentation).ObserveWorkload(tasks)
	capa, _ := cl.Capacity()
	order := Order(tasks, 42, 1.3, capa)
	fails := map[string]int{}
	for i := range order {
		_, err := fw.Schedule(context.Background(), &order[i], framework.ScheduleOptions{})
		if err != nil {
			r := &order[i]
			fails[fmt.Sprintf("g%d m%d", r.DeviceCount, r.ComputeMilli)]++
		}
	}
	var partial, wholeCPUStrand, wholeMemStrand, wholeOK, partialCPU int64
	byModel := map[string]int64{}
	for _, n := range cl.Nodes {
		for i, d := range n.Devices {
			if d.FreeMilli == 0 {
				continue
			}
			byModel[n.Node.Devices[i].Model] += int64(d.FreeMilli)
			switch {
			case d.FreeMilli < 1000 && n.FreeCPU < 2000:
				partialCPU += int64(d.FreeMilli)
			case d.FreeMilli < 1000:
				partial += int64(d.FreeMilli)
			case n.FreeCPU < 4000:
				wholeCPUStrand += 1000
			case n.FreeMem < 16384:
				wholeMemStrand += 1000
			default:
				wholeOK += 1000
			}
		}
	}
	fmt.Println("alloc", float64(cl.Allocated())/float64(capa), "partial", partial, "partialCPU", partialCPU, "wholeCPU", wholeCPUStrand, "wholeMem", wholeMemStrand, "wholeOK", wholeOK)
	fmt.Println(byModel)
	fmt.Println(fails)
}
