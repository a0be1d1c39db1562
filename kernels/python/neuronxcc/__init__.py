"""neuronxcc on the ncore NeuronCore model: only its NKI front end (neuronxcc.nki)."""
