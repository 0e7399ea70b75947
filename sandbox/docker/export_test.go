package docker

// ContainerConfig exposes containerConfig to the external tests.
var ContainerConfig = containerConfig
var CheckDirs = checkDirs

// LabelStartBy exposes labelStartBy to the external tests.
const LabelStartBy = labelStartBy
