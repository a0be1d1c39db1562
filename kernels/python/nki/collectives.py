"""nki.collectives: collective communication between NeuronCores. This model has one NeuronCore, so
every call is refused by name (the names are NKI 0.7's)."""
from neuronxcc.nki import _calls

_WHY = "collectives run between NeuronCores, and this model has one"

for _n in ("all_reduce", "all_gather", "all_gather_v", "reduce_scatter", "all_to_all", "all_to_all_v",
           "collective_permute", "collective_permute_implicit", "collective_permute_implicit_reduce",
           "collective_permute_implicit_current_processing_rank_id", "rank_id", "all_to_all_v_prepare",
           "all_to_all_v_trigger", "all_gather_v_prepare", "all_gather_v_trigger", "ReplicaGroup"):
    globals()[_n] = _calls.refused(f"nki.collectives.{_n}", _WHY)
