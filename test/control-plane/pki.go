package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the paths of the generated TLS and service-account material in the state dir.
type pki struct {
	CACert, CAKey        string
	ServingCert          string
	ServingKey           string
	ServiceAccountKey    string
	ServiceAccountPubKey string
}

const certValidity = 10 * 365 * 24 * time.Hour

func pkiPaths(stateDir string) pki {
	dir := filepath.Join(stateDir, "pki")
	return pki{
		CACert:               filepath.Join(dir, "ca.crt"),
		CAKey:                filepath.Join(dir, "ca.key"),
		ServingCert:          filepath.Join(dir, "apiserver.crt"),
		ServingKey:           filepath.Join(dir, "apiserver.key"),
		ServiceAccountKey:    filepath.Join(dir, "sa.key"),
		ServiceAccountPubKey: filepath.Join(dir, "sa.pub"),
	}
}

// ensurePKI reuses the CA, serving certificate and service-account key pair found in the
// state dir and generates whichever is missing, so restarts keep the same trust and tokens.
//
// The serving certificate names loopback, the kubernetes Service's ClusterIP (what pods use
// through KUBERNETES_SERVICE_HOST) and advertiseAddress; one that lacks any is replaced.
func ensurePKI(stateDir, advertiseAddress string) (pki, error) {
	p := pkiPaths(stateDir)
	if err := os.MkdirAll(filepath.Dir(p.CACert), 0o700); err != nil {
		return p, err
	}

	caCert, caKey, err := loadCertAndKey(p.CACert, p.CAKey)
	if errors.Is(err, os.ErrNotExist) {
		caCert, caKey, err = newCA()
		if err == nil {
			err = writeCertAndKey(p.CACert, p.CAKey, caCert, caKey)
		}
		// A new CA invalidates any serving certificate signed by an old one.
		_ = os.Remove(p.ServingCert)
	}
	if err != nil {
		return p, fmt.Errorf("CA: %w", err)
	}

	servingIPs := []net.IP{net.ParseIP(loopback), net.IPv6loopback, net.ParseIP(kubernetesServiceIP), net.ParseIP(advertiseAddress)}
	if cert, _, err := loadCertAndKey(p.ServingCert, p.ServingKey); err == nil && !namesAll(cert, servingIPs) {
		_ = os.Remove(p.ServingCert)
	}
	if _, _, err := loadCertAndKey(p.ServingCert, p.ServingKey); errors.Is(err, os.ErrNotExist) {
		cert, key, err := newServingCert(caCert, caKey, servingIPs)
		if err == nil {
			err = writeCertAndKey(p.ServingCert, p.ServingKey, cert, key)
		}
		if err != nil {
			return p, fmt.Errorf("serving certificate: %w", err)
		}
	} else if err != nil {
		return p, fmt.Errorf("serving certificate: %w", err)
	}

	if _, err := os.Stat(p.ServiceAccountKey); errors.Is(err, os.ErrNotExist) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return p, err
		}
		if err := writeKey(p.ServiceAccountKey, key); err != nil {
			return p, fmt.Errorf("service-account key: %w", err)
		}
		_ = os.Remove(p.ServiceAccountPubKey)
	} else if err != nil {
		return p, err
	}
	if _, err := os.Stat(p.ServiceAccountPubKey); errors.Is(err, os.ErrNotExist) {
		key, err := loadKey(p.ServiceAccountKey)
		if err != nil {
			return p, fmt.Errorf("service-account key: %w", err)
		}
		der, err := x509.MarshalPKIXPublicKey(key.(crypto.Signer).Public())
		if err != nil {
			return p, err
		}
		if err := writeFileAtomic(p.ServiceAccountPubKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
			return p, err
		}
	}
	return p, nil
}

func newCA() (*x509.Certificate, crypto.Signer, error) {
	return issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "nest-leader-control-plane-ca"},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
}

// issue creates a P-256 key and a certificate for it from tmpl (serial number and validity
// are set here), signed with parentKey as parent — self-signed when parent is nil.
func issue(tmpl, parent *x509.Certificate, parentKey crypto.Signer) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = randomSerial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(certValidity)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// kubernetesServiceIP is the first address of --service-cluster-ip-range (apiserver.go).
const kubernetesServiceIP = "10.0.0.1"

func namesAll(cert *x509.Certificate, ips []net.IP) bool {
	for _, ip := range ips {
		if cert.VerifyHostname(ip.String()) != nil {
			return false
		}
	}
	return true
}

func newServingCert(ca *x509.Certificate, caKey crypto.Signer, ips []net.IP) (*x509.Certificate, crypto.Signer, error) {
	return issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: ips,
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}, ca, caKey)
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func loadCertAndKey(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	data, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, fmt.Errorf("%s: no PEM certificate", certPath)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certPath, err)
	}
	key, err := loadKey(keyPath)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a signing key", keyPath)
	}
	return cert, signer, nil
}

func loadKey(path string) (crypto.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM key", path)
	}
	switch block.Type {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		return x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	}
	return nil, fmt.Errorf("%s: unsupported PEM type %q", path, block.Type)
}

func writeCertAndKey(certPath, keyPath string, cert *x509.Certificate, key crypto.Signer) error {
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return writeFileAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644)
}

func writeKey(path string, key crypto.Signer) error {
	ecKey, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return fmt.Errorf("unexpected key type %T", key)
	}
	der, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}
