// tandem::optim: optimizers.
#pragma once
