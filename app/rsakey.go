package app

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// checkRSAKey checks that key is a PEM RSA private key, as GitHub issues.
func checkRSAKey(key []byte) error {
	block, _ := pem.Decode(key)
	if block == nil {
		return errors.New("not a PEM file: download the private key from the app's settings")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("not an RSA private key: %w", err)
	}
	if _, ok := k.(interface{ Size() int }); !ok {
		return errors.New("not an RSA private key")
	}
	return nil
}
