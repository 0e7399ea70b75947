package sandbox

// ContainerConfig exposes containerConfig to the external tests.
var ContainerConfig = containerConfig
