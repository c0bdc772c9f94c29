// Copyright: (c) 2026, gpuops.cluster contributors
// GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// kube-multi is the test bed's Kubernetes: one binary that runs etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler or the kubelet, named by its first argument
// (`kube-multi kube-apiserver --flags...`), each through its own upstream command. One binary
// links the shared packages once, which keeps the build and the cache small.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	_ "time/tzdata" // CronJob time zones, as the upstream apiserver and controller-manager mains do

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
}

func usage() {
	names := []string{"etcd"}
	for name := range components {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: %s COMPONENT [FLAGS...]\ncomponents: %v\n", os.Args[0], names)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	if name == "etcd" {
		// etcdmain parses os.Args itself: drop the component name so it sees its own flags.
		etcdmain.Main(append([]string{"etcd"}, os.Args[2:]...))
		return
	}
	newCommand, ok := components[name]
	if !ok {
		usage()
		os.Exit(2)
	}
	command := newCommand()
	command.SetArgs(os.Args[2:])
	os.Exit(cli.Run(command))
}
