// Package testmount gives tests the file-system conditions only a mount
// can make.
package testmount
