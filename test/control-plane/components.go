package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as the upstream mains register them
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

// components are the Kubernetes programs this binary also is, selected by its first argument
// (`control-plane kubelet --config …`), the way k3s and hyperkube embed them: one cached build
// serves the test control plane and the node that scripts/cluster.sh runs. Each runs in its
// own process with exactly the flags of the upstream program of the same name.
var components = map[string]func() *cobra.Command{
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy":              proxy.NewProxyCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
}

// runComponent runs the component named by args[0], if it is one, and reports whether it did
// (it exits the process when it does).
func runComponent(args []string) bool {
	if len(args) == 0 {
		return false
	}
	if args[0] == "netns-forward" {
		os.Exit(runForward(args[1:]))
	}
	if args[0] == "kubectl" {
		os.Args = append([]string{"kubectl"}, args[1:]...)
		logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
		if err := cli.RunNoErrOutput(kubectlcmd.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
		os.Exit(0)
	}
	newCommand, ok := components[args[0]]
	if !ok {
		return false
	}
	os.Args = append([]string{args[0]}, args[1:]...)
	os.Exit(cli.Run(newCommand()))
	return true
}
