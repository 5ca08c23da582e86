package main

import (
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const clusterName = "control-plane"

// writeKubeconfigs writes <state-dir>/kubeconfig with a context per identity (admin current)
// and <state-dir>/kubeconfig-<name> with only that identity, each with the CA embedded.
func writeKubeconfigs(stateDir, serverURL, caFile string, ids []identity, tokens map[string]string) (string, error) {
	caData, err := os.ReadFile(caFile)
	if err != nil {
		return "", err
	}
	build := func(current string, names []string) *clientcmdapi.Config {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: serverURL, CertificateAuthorityData: caData}
		for _, name := range names {
			cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tokens[name]}
			cfg.Contexts[name] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: name, Namespace: "default"}
		}
		cfg.CurrentContext = current
		return cfg
	}

	all := []string{adminName}
	for _, id := range ids {
		all = append(all, id.Name)
	}
	main := filepath.Join(stateDir, "kubeconfig")
	if err := writeKubeconfig(main, build(adminName, all)); err != nil {
		return "", err
	}
	for _, id := range ids {
		if err := writeKubeconfig(filepath.Join(stateDir, "kubeconfig-"+id.Name), build(id.Name, []string{id.Name})); err != nil {
			return "", err
		}
	}
	return main, nil
}

func writeKubeconfig(path string, cfg *clientcmdapi.Config) error {
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o600)
}
