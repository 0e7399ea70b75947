package kubernetes

// PodFor exposes podFor to the external tests.
var PodFor = podFor
