; ModuleID = 'jit_mlp_loss'
